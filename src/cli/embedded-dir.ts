// Which folder holds the embedded server of a port: its data (the append-only
// file), its password and the note of who runs it. Each port has its own, so a
// second embedded server (SKYQ_EMBEDDED_PORT) never appends to the first one's
// AOF: the default port keeps ./.skyq itself, any other port ./.skyq/<port>/.
//
// Upgrades: before 0.1.x every port used ./.skyq itself. The server's config file
// there (redis-<port>.conf) says which port it served, so a ./.skyq that only a
// non-default port ever used stays that port's, data and password included.
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DEFAULT_EMBEDDED_PORT, embeddedPort } from '../redis/default-redis.js';

export const EMBEDDED_DIR = '.skyq';
export { DEFAULT_EMBEDDED_PORT, embeddedPort };

/** Ports whose redis-server wrote its config file at the top of `base` (the flat layout). */
function portsServedFrom(base: string): number[] {
  try {
    return readdirSync(base)
      .map((name) => /^redis-(\d+)\.conf$/.exec(name)?.[1])
      .filter((port): port is string => port !== undefined)
      .map(Number);
  } catch {
    return []; // no folder yet
  }
}

/**
 * The port that owns `base` itself: the default port, unless the folder was only ever used by
 * one other port (an older skyq run with SKYQ_EMBEDDED_PORT), which keeps it. When several
 * ports shared it (the defect this layout ends), the default port keeps it if it was among
 * them, otherwise the lowest of them.
 */
function ownerOf(base: string): number {
  const ports = portsServedFrom(base);
  if (ports.length === 0 || ports.includes(DEFAULT_EMBEDDED_PORT)) return DEFAULT_EMBEDDED_PORT;
  return ports.sort((a, b) => a - b)[0] as number;
}

/** The absolute folder of the embedded server on `port`, under `base` (./.skyq). */
export function embeddedDir(port = embeddedPort(), base = EMBEDDED_DIR): string {
  const root = resolve(base);
  return ownerOf(root) === port ? root : join(root, String(port));
}
