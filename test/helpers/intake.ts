/**
 * Helpers for the intake suites: items pushed the way other programs push them (redis-cli
 * LPUSH, oldest first; redis-cli ZADD for sorted sets), and the fixture handler's start
 * records read back.
 */
import { spawn } from 'node:child_process';
import type { Cluster, Redis } from 'ioredis';
import type { RedisClusterHandle, RedisServerHandle } from './redis.js';

/** Items LPUSHed by `redis-cli` (with -c on a cluster), `perCommand` values per LPUSH, in order. */
export async function lpushWithCli(
  handle: RedisServerHandle | RedisClusterHandle,
  list: string,
  items: string[],
  perCommand = 500,
): Promise<void> {
  const lines: string[] = [];
  for (let i = 0; i < items.length; i += perCommand) {
    lines.push(['LPUSH', list, ...items.slice(i, i + perCommand)].join(' '));
  }
  await cliLines(handle, lines);
}

/** Members ZADDed by `redis-cli` (with -c on a cluster), as `ZADD key <score> <member>` lines. */
export async function zaddWithCli(
  handle: RedisServerHandle | RedisClusterHandle,
  key: string,
  members: [score: number | string, member: string][],
  perCommand = 500,
): Promise<void> {
  const lines: string[] = [];
  for (let i = 0; i < members.length; i += perCommand) {
    const pairs = members.slice(i, i + perCommand).flat();
    lines.push(['ZADD', key, ...pairs].join(' '));
  }
  await cliLines(handle, lines);
}

async function cliLines(handle: RedisServerHandle | RedisClusterHandle, lines: string[]) {
  const node = 'nodes' in handle ? (handle.nodes[0] as { port: number }) : handle;
  const args = ['-p', String(node.port), ...('nodes' in handle ? ['-c'] : [])];
  await new Promise<void>((resolve, reject) => {
    const child = spawn('redis-cli', args, { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`redis-cli exited ${code}: ${stderr}`)),
    );
    child.stdin.end(`${lines.join('\n')}\n`);
  });
}

export interface Start {
  id: string;
  dueAt: number;
  startedAt: number;
  body: string | { hex: string };
}

/** Every start test/fixtures/starts.mjs recorded, in the order they were recorded. */
export async function readStarts(client: Redis | Cluster): Promise<Start[]> {
  return (await client.lrange('starts', 0, -1)).map((line) => JSON.parse(line) as Start);
}

/** `count` item names like `high:00042`, which sort in push order. */
export const itemsOf = (list: string, count: number) =>
  Array.from({ length: count }, (_, i) => `${list}:${String(i).padStart(5, '0')}`);

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}
