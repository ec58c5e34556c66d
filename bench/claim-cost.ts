/**
 * What one claim costs Redis per call and per message (issue 26): one group holding `--count`
 * messages all due, drained by claims of `--batch` messages each, every claim acking the one
 * before (as an actor's do), nothing else running. Redis's own time for the script calls
 * (INFO commandstats, commands run inside the scripts included). Then what a call costs before
 * the script's first line: EVALSHA of the helpers every group script carries plus `return 1`,
 * against `return 1` alone.
 *
 *   npm run build && node dist/bench/claim-cost.js [--count 20000] [--batch 1,4,16,64]
 */
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import type { Message } from '../src/queue/message.js';
import { Queue } from '../src/queue/queue.js';
import { scriptSource } from '../src/redis/scripts.js';
import { startRedisServer } from '../src/redis/server.js';
import { readScripts } from './script-reading.js';

async function claimCost(
  queue: Queue,
  reader: Redis,
  count: number,
  batch: number,
): Promise<string> {
  const due = Date.now() - 60_000;
  for (let i = 0; i < count; i += 1000) {
    const size = Math.min(1000, count - i);
    await queue.addBulk(
      Array.from({ length: size }, () => ({
        body: 'x'.repeat(100),
        options: { group: 0, runAt: due + Math.random() * 1000 },
      })),
    );
  }
  const before = await readScripts(reader);
  let ack: Message[] = [];
  let handled = 0;
  for (;;) {
    ack = (await queue.poll(0, { max: batch, ack, lookaheadMs: 5 })).messages as Message[];
    handled += ack.length;
    if (ack.length === 0) break;
  }
  const after = await readScripts(reader);
  const calls = after.calls - before.calls;
  const usec = after.usec - before.usec;
  return `batch ${batch}: ${calls} calls, ${(usec / calls).toFixed(0)} µs a call, ${(usec / handled).toFixed(1)} µs a message`;
}

/** µs a call of `lua`, run `runs` times with the group scripts' 30 keys and 20 arguments. */
async function callCost(client: Redis, lua: string, runs: number): Promise<number> {
  const sha = (await client.script('LOAD', lua)) as string;
  const keys = Array.from({ length: 30 }, (_, i) => `{probe:0}:k${i}`);
  const args = Array.from({ length: 20 }, (_, i) => `a${i}`);
  const before = await readScripts(client);
  for (let i = 0; i < runs; i++) await client.evalsha(sha, keys.length, ...keys, ...args);
  const after = await readScripts(client);
  return (after.usec - before.usec) / (after.calls - before.calls);
}

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '20000' },
    batch: { type: 'string', default: '1,4,16,64' },
  },
});
const server = await startRedisServer();
const queue = new Queue({ redis: server.url, groups: 1 });
/** Reads the server's figures and runs the bare script calls. */
const reader = new Redis(server.url);
try {
  await queue.ready();
  for (const batch of (values.batch as string).split(',').map(Number)) {
    console.log(await claimCost(queue, reader, Number(values.count), batch));
  }
  const claim = scriptSource('claim');
  const helpers = claim.slice(0, claim.lastIndexOf('-- claim.lua:'));
  const bare = await callCost(reader, 'return 1', 5000);
  const withHelpers = await callCost(reader, `${helpers}\nreturn 1`, 5000);
  console.log(
    `a call before its first line: ${bare.toFixed(1)} µs for return 1, ${withHelpers.toFixed(1)} µs with the ${Math.round(helpers.length / 1024)} KB of helpers`,
  );
} finally {
  reader.disconnect();
  await queue.close();
  await server.stop();
}
