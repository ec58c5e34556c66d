// Which maxmemory-policy a server runs. An `allkeys-*` policy deletes any key when Redis is
// full, queued messages and id counters included (measured: 79 % of 40,000 acknowledged adds
// lost, and ids given twice). `noeviction` refuses writes instead (adds fail with OOM, nothing
// stored is lost). `volatile-*` policies only evict keys that carry a TTL, and no key holding a
// pending message carries one, so they are accepted.
//
// The policy is read from INFO memory first: managed services and least-privilege ACL users
// (see acl.ts) often may run INFO but not CONFIG. CONFIG GET is the fallback.
import type { Redis } from 'ioredis';

export const EVICTION_FIX = 'CONFIG SET maxmemory-policy noeviction';

export type PolicyReading = { policy: string } | { unreadable: string };

/** True for a policy that may delete skyq's keys (every `allkeys-*` one). */
export function canEvict(policy: string): boolean {
  return policy.startsWith('allkeys-');
}

export async function readEvictionPolicy(server: Redis): Promise<PolicyReading> {
  const reasons: string[] = [];
  try {
    const info = await server.info('memory');
    const found = /^maxmemory_policy:(\S+)/m.exec(info);
    if (found) return { policy: found[1] as string };
    reasons.push('INFO memory has no maxmemory_policy');
  } catch (error) {
    reasons.push(`INFO: ${firstLine(error)}`);
  }
  try {
    const reply = (await server.config('GET', 'maxmemory-policy')) as unknown;
    if (Array.isArray(reply) && typeof reply[1] === 'string') return { policy: reply[1] };
    reasons.push('CONFIG GET maxmemory-policy gave no value');
  } catch (error) {
    reasons.push(`CONFIG: ${firstLine(error)}`);
  }
  return { unreadable: reasons.join('; ') };
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n')[0] ?? text;
}
