/**
 * The fault suite's record of a run, for docs/RELIABILITY.md: when it started, how long it
 * took, which test files ran and how each test ended, and the machine (Node, Redis, cores, load).
 * A new run clears the previous run's fault costs, so the doc never mixes two runs.
 * Written to .test-tmp/faults/run.json; scripts/reliability-doc.mjs renders it.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';
import { RESULTS_DIR } from './results.js';

const RUN_FILE = join(RESULTS_DIR, '../run.json');

export default class RunReporter implements Reporter {
  #startedAt = 0;
  #loadAtStart: number[] = [];

  onTestRunStart(): void {
    this.#startedAt = Date.now();
    this.#loadAtStart = loadavg();
    rmSync(join(RESULTS_DIR, '..'), { recursive: true, force: true });
    mkdirSync(RESULTS_DIR, { recursive: true });
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const endedAt = Date.now();
    const files = modules.map((module) => ({
      file: module.relativeModuleId,
      state: module.state(),
      durationMs: Math.round(module.diagnostic().duration),
      tests: [...module.children.allTests()].map((test) => ({
        name: test.fullName,
        state: test.result().state,
        durationMs: Math.round(test.diagnostic()?.duration ?? 0),
      })),
    }));
    const redis = spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).stdout ?? '';
    const run = {
      startedAt: new Date(this.#startedAt).toISOString(),
      wallMs: endedAt - this.#startedAt,
      command:
        process.env.npm_lifecycle_event === 'test:faults'
          ? 'npm run test:faults'
          : `vitest ${process.argv.slice(2).join(' ')}`,
      node: process.version,
      redis: /v=(\S+)/.exec(redis)?.[1] ?? 'unknown',
      cores: cpus().length,
      cpu: cpus()[0]?.model ?? 'unknown',
      loadAverage: { atStart: this.#loadAtStart.map(round), atEnd: loadavg().map(round) },
      files,
    };
    mkdirSync(RESULTS_DIR, { recursive: true });
    writeFileSync(RUN_FILE, `${JSON.stringify(run, null, 2)}\n`);
  }
}

const round = (n: number) => Math.round(n * 100) / 100;
