// The library's word on an evicting Redis: a Queue reads each server's maxmemory-policy after
// its first command and, where it can delete queued messages, emits one process warning per
// server (per process, however many Queues). Launchers check more strictly (they refuse to
// start: src/runtime/server-checks.ts); a policy that cannot be read is left to them too.
import type { RedisClient } from '../redis/connection.js';
import { canEvict, EVICTION_FIX, readEvictionPolicy } from '../redis/eviction.js';
import { serversOf } from '../redis/servers.js';

const warned = new Set<string>();

/** Never rejects: a check that cannot run says nothing (the command's own error says why). */
export async function warnIfEvicting(client: RedisClient): Promise<void> {
  try {
    const servers = (await serversOf(client)).filter(({ name }) => !warned.has(name));
    await Promise.all(
      servers.map(async ({ name, client: server }) => {
        const reading = await readEvictionPolicy(server);
        if (!('policy' in reading) || !canEvict(reading.policy) || warned.has(name)) return;
        warned.add(name);
        process.emitWarning(
          `skyq: Redis at ${name} has maxmemory-policy ${reading.policy}, which deletes queued messages when memory is full: run ${EVICTION_FIX} there`,
          { code: 'SKYQ_EVICTION' },
        );
      }),
    );
  } catch {
    // closed or unreachable: nothing to say
  }
}
