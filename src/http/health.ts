// /healthz: healthy only when every actor answers `ping` within a second, Redis answers
// PING, and no server runs a maxmemory-policy that can delete messages (even when the start
// was allowed with --allow-eviction: it is still unsafe). Degraded (still 200: it works) for
// DEGRADED_AFTER_LOSS_MS after a server came back without skyq's data, so a probe that polls
// now and then sees it. The checks run at once, so a request takes at most about a second.
import type { RedisClient } from '../redis/connection.js';
import { EVICTION_FIX } from '../redis/eviction.js';
import { withTimeout } from '../runtime/rpc.js';
import type { ServerState } from '../runtime/server-checks.js';

export const HEALTH_TIMEOUT_MS = 1000;
/** How long /healthz says degraded after a server lost skyq's data. */
export const DEGRADED_AFTER_LOSS_MS = 15 * 60_000;

/** What /healthz needs of a launcher (a Launcher fits). */
export interface Pingable {
  readonly groups: number[];
  debug(group: number, command: 'ping', timeoutMs: number): Promise<unknown>;
}

export interface Health {
  healthy: boolean;
  /** per group: pong, down or timeout */
  actors: Record<string, string>;
  redis: string;
  /** per server: its maxmemory-policy (null: unreadable) and clock skew in ms */
  servers: {
    server: string;
    policy: string | null;
    evicting: boolean;
    skewMs: number | null;
    dataLostTotal: number;
  }[];
  /** one line per problem, empty when healthy */
  reasons: string[];
  /** one line per recent trouble that did not stop the work (a server lost skyq's data) */
  warnings: string[];
}

export async function checkHealth(
  launcher: Pingable | null,
  client: RedisClient,
  servers: ServerState[] = [],
  timeoutMs = HEALTH_TIMEOUT_MS,
): Promise<Health> {
  const reasons: string[] = [];
  const groups = launcher?.groups ?? [];
  const [answers, redis] = await Promise.all([
    Promise.all(groups.map((group) => pingActor(launcher as Pingable, group, timeoutMs))),
    pingRedis(client, timeoutMs),
  ]);
  const actors: Record<string, string> = {};
  groups.forEach((group, i) => {
    const answer = answers[i] as string;
    actors[group] = answer;
    if (answer === 'down') reasons.push(`actor ${group} is down (restarting)`);
    else if (answer !== 'pong')
      reasons.push(`actor ${group} did not answer ping within ${timeoutMs} ms`);
  });
  if (redis !== 'PONG') reasons.push(`redis: ${redis}`);
  for (const s of servers) {
    if (s.evicting)
      reasons.push(
        `redis ${s.server}: maxmemory-policy ${s.policy} deletes queued messages when memory is full (${EVICTION_FIX})`,
      );
  }
  const warnings: string[] = [];
  for (const s of servers) {
    const lost = s.dataLost;
    if (lost && Date.now() - lost.at < DEGRADED_AFTER_LOSS_MS)
      warnings.push(
        `redis ${s.server}: ${lost.older ? 'came back with older data than skyq had written' : "came back without skyq's data"} at ${new Date(lost.at).toISOString()} (groups ${lost.groups.join(',')})`,
      );
  }
  const shown = servers.map(({ server, policy, evicting, skewMs, dataLostTotal }) => ({
    server,
    policy,
    evicting,
    skewMs,
    dataLostTotal: dataLostTotal ?? 0,
  }));
  return { healthy: reasons.length === 0, actors, redis, servers: shown, reasons, warnings };
}

async function pingActor(launcher: Pingable, group: number, timeoutMs: number): Promise<string> {
  try {
    // The coordinator times the ping out itself; the outer limit covers a coordinator that hangs.
    const answer = await withTimeout(
      launcher.debug(group, 'ping', timeoutMs),
      timeoutMs + 250,
      `actor ${group} ping`,
    );
    if (answer === 'pong' || answer === 'down') return answer;
    return 'timeout';
  } catch {
    return 'timeout';
  }
}

async function pingRedis(client: RedisClient, timeoutMs: number): Promise<string> {
  try {
    return await withTimeout(client.ping(), timeoutMs, 'redis PING');
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
