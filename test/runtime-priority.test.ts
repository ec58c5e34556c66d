import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { describe, expect, it } from 'vitest';
import { startActors } from '../src/start.js';
import { runCli, spawnCli, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();
const linux = process.platform === 'linux';

/** The nice value of each thread of this process by its id, from /proc (field 19 of its stat). */
function threadNices(): Map<number, number> {
  const nices = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      // The command name, in parentheses, may hold spaces: count fields after its end.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      nices.set(Number(tid), Number(fields[16]));
    } catch {
      // the thread ended while we read
    }
  }
  return nices;
}

/** Node's helper threads (V8's workers, libuv's pool…): those there before any launcher ran. */
const helpers = [...threadNices().keys()].filter((tid) => tid !== process.pid);

async function nicesWhileRunning(options: { actorNice?: number; groups: number }) {
  const launcher = await startActors({
    redis: redis.server.url,
    prefix: `nice${options.actorNice ?? 'default'}`,
    publishStats: false,
    logDir: tempDir(),
    ...options,
  });
  try {
    return threadNices();
  } finally {
    await launcher.stop(1000);
  }
}

/** The nices of the threads a launcher started (its actors and coordinator), and of the helpers. */
function split(nices: Map<number, number>) {
  const started = [...nices].filter(([tid]) => tid !== process.pid && !helpers.includes(tid));
  return {
    started: started.map(([, nice]) => nice),
    helpers: helpers.filter((tid) => nices.has(tid)).map((tid) => nices.get(tid) as number),
  };
}

describe.skipIf(!linux)('actor thread priority (actorNice)', () => {
  const base = getPriority(0);
  // Putting a priority back up takes root (or RLIMIT_NICE): elsewhere the helpers stay lowered.
  const mayRaise = process.getuid?.() === 0;

  it('lowers each actor thread and the helper threads by the steps asked, not the launcher thread', async () => {
    // Capped at 19, as the kernel caps it: a test runner already niced still sees the cap.
    const nices = await nicesWhileRunning({ actorNice: 7, groups: 3 });
    const lowered = Math.min(19, base + 7);
    const { started, helpers: helperNices } = split(nices);
    expect(started.filter((n) => n === lowered)).toHaveLength(3); // the actors, not the coordinator
    expect(helperNices.length).toBeGreaterThan(3);
    expect(helperNices.every((n) => n === lowered)).toBe(true);
    expect(getPriority(0)).toBe(base);
    expect(nices.get(process.pid)).toBe(base);
    if (mayRaise) expect(split(threadNices()).helpers.every((n) => n === base)).toBe(true);
  });

  it('lowers them by 10 by default', async () => {
    const { started, helpers: helperNices } = split(await nicesWhileRunning({ groups: 2 }));
    expect(started.filter((n) => n === Math.min(19, base + 10))).toHaveLength(2);
    expect(helperNices.every((n) => n === Math.min(19, base + 10))).toBe(true);
  });

  it('leaves every thread as it was with actorNice 0', async () => {
    // As it was: where the process may not raise priorities, the tests above left the helpers
    // lowered (as the docs say a stopped launcher does there).
    const before = split(threadNices()).helpers;
    const nices = await nicesWhileRunning({ actorNice: 0, groups: 2 });
    const { started, helpers: helperNices } = split(nices);
    expect(started.every((n) => n === base)).toBe(true);
    expect(nices.get(process.pid)).toBe(base);
    expect(helperNices).toEqual(before);
    if (mayRaise) expect(before.every((n) => n === base)).toBe(true);
  });
});

describe('actorNice input', () => {
  it.each([20, -1, 2.5, '5'])('refuses %s with one line naming the option', async (value) => {
    await expect(
      startActors({ redis: redis.server.url, logDir: tempDir(), actorNice: value as number }),
    ).rejects.toThrow(/actorNice.*(between 0 and 19|integer)/);
  });
});

/** The nice values of a child process's threads. */
function childNices(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      return [Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])];
    } catch {
      return [];
    }
  });
}

describe('skyq start --actor-nice', () => {
  it.skipIf(!linux)(
    'lowers the actor and helper threads of the CLI by the steps given',
    async () => {
      const run = spawnCli([
        'start',
        '--redis',
        redis.server.url,
        '--prefix',
        'cli-nice',
        '--groups',
        '2',
        '--actor-nice',
        '4',
        '--log-dir',
        tempDir(),
      ]);
      try {
        await waitFor('actors ready', async () =>
          /actors? ready/.test(run.stdout()) ? true : undefined,
        );
        const base = getPriority(run.child.pid as number);
        const nices = childNices(run.child.pid as number);
        // At the launcher's priority: its own thread and the coordinator's; every other one (the
        // two actors, Node's helper threads) lowered.
        expect(nices.filter((n) => n === base)).toHaveLength(2);
        expect(nices.filter((n) => n === Math.min(19, base + 4))).toHaveLength(nices.length - 2);
      } finally {
        run.child.kill('SIGTERM');
        await run.done;
      }
    },
  );

  it.each(['20', '-1', 'x'])('refuses %s with one line naming the flag', async (value) => {
    const result = await runCli(['start', '--redis', redis.server.url, '--actor-nice', value]);
    expect(result.code).toBe(1);
    expect(result.stderr.split('\n')[0]).toMatch(/^skyq: actor-nice: /);
  });
});
