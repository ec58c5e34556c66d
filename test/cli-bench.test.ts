/**
 * `skyq bench` as a user runs it (the compiled CLI on a private redis-server it starts): it
 * accounts for every message, says how many starts came before their due time and how early the
 * earliest was, and reports the actors' start-up cost. Figures are not judged here: benchmarks
 * are scripts, and a slow machine must not fail a test.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { removeTempDirs, runCli } from './helpers/runtime.js';

afterAll(() => removeTempDirs());

async function bench(args: string[]): Promise<Record<string, unknown>> {
  const result = await runCli(['bench', ...args, '--json'], '', 90_000);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

describe('skyq bench', () => {
  it('seed: every message handled once, early starts counted with the earliest, start-up cost', async () => {
    const r = await bench([
      '--workload',
      'seed',
      '--count',
      '2000',
      '--spread',
      '1s',
      '--idle',
      '0',
    ]);
    expect(r).toMatchObject({
      workload: 'seed',
      messages: 2000,
      handled: 2000,
      lost: 0,
      duplicates: 0,
    });
    const early = r.early as { count: number; maxMs: number };
    expect(early.count).toBeGreaterThanOrEqual(0);
    // How early the earliest was is known exactly when there was one.
    expect(early.maxMs > 0).toBe(early.count > 0);
    const startup = r.startup as { seconds: number; cpuSeconds: number };
    expect(startup.seconds).toBeGreaterThan(0);
    expect(startup.cpuSeconds).toBeGreaterThan(0);
    expect(r.nodeCpuSeconds).toBeGreaterThan(0);
  }, 120_000);

  it('memory: bytes per pending message, nothing consumed', async () => {
    const r = await bench(['--workload', 'memory', '--count', '2000']);
    expect(r).toMatchObject({ workload: 'memory', messages: 2000, handled: 0 });
    expect(r.bytesPerMessage).toBeGreaterThan(100);
  }, 120_000);
});
