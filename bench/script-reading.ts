/**
 * What Redis has spent on scripts so far (INFO commandstats: EVALSHA calls and µs; INFO cpu:
 * the server's CPU), and the cost per message between two readings: the figures flow-cost.ts
 * and report-cost.ts print.
 */
import type { Redis } from 'ioredis';

export interface ScriptReading {
  calls: number;
  usec: number;
  cpu: number;
}

export async function readScripts(client: Redis): Promise<ScriptReading> {
  const stats = await client.info('commandstats');
  const evalsha = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(stats);
  const cpu = await client.info('cpu');
  const field = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(cpu)?.[1]);
  return {
    calls: Number(evalsha?.[1] ?? 0),
    usec: Number(evalsha?.[2] ?? 0),
    cpu: (field('used_cpu_user') + field('used_cpu_sys')) * 1e6,
  };
}

/** Script calls, µs inside them and server CPU µs per message, to `decimals` places. */
export function costPer(
  before: ScriptReading,
  after: ScriptReading,
  count: number,
  decimals: number,
) {
  const scale = 10 ** decimals;
  const per = (n: number) => Math.round((n / count) * scale) / scale;
  return {
    calls: per(after.calls - before.calls),
    scriptUs: per(after.usec - before.usec),
    cpuUs: per(after.cpu - before.cpu),
  };
}
