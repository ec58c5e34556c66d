import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { describe, expect, it } from 'vitest';
import { startActors } from '../src/start.js';
import { runCli, spawnCli, tempDir, useRuntimeRedis, waitFor } from './helpers/runtime.js';

const redis = useRuntimeRedis();
const linux = process.platform === 'linux';

/** The nice value of every thread of this process, from /proc (field 19 of each task's stat). */
function threadNices(): number[] {
  return readdirSync('/proc/self/task').flatMap((tid) => {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      // The command name, in parentheses, may hold spaces: count fields after its end.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return [Number(fields[16])];
    } catch {
      return []; // the thread ended while we read
    }
  });
}

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

describe.skipIf(!linux)('actor thread priority (actorNice)', () => {
  const base = getPriority(0);

  it('lowers each actor thread, and no other, by the steps asked', async () => {
    // Capped at 19, as the kernel caps it: a test runner already niced still sees the cap.
    const nices = await nicesWhileRunning({ actorNice: 7, groups: 3 });
    const lowered = Math.min(19, base + 7);
    expect(nices.filter((n) => n === lowered)).toHaveLength(3);
    expect(getPriority(0)).toBe(base);
  });

  it('lowers them by 10 by default', async () => {
    const nices = await nicesWhileRunning({ groups: 2 });
    expect(nices.filter((n) => n === Math.min(19, base + 10))).toHaveLength(2);
  });

  it('leaves them at the launcher priority with actorNice 0', async () => {
    const nices = await nicesWhileRunning({ actorNice: 0, groups: 2 });
    expect(nices.every((n) => n === base)).toBe(true);
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
  it.skipIf(!linux)('lowers each actor thread of the CLI by the steps given', async () => {
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
      expect(
        childNices(run.child.pid as number).filter((n) => n === Math.min(19, base + 4)),
      ).toHaveLength(2);
    } finally {
      run.child.kill('SIGTERM');
      await run.done;
    }
  });

  it.each(['20', '-1', 'x'])('refuses %s with one line naming the flag', async (value) => {
    const result = await runCli(['start', '--redis', redis.server.url, '--actor-nice', value]);
    expect(result.code).toBe(1);
    expect(result.stderr.split('\n')[0]).toMatch(/^skyq: actor-nice: /);
  });
});
