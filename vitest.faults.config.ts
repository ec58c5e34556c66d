import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { BESIDE } from './test/faults/helpers/beside.js';

/** The files that run beside the others start first, so their waits overlap the whole run. */
class BesideFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const beside = (file: TestSpecification) => BESIDE.some((name) => file.moduleId.endsWith(name));
    const sorted = await super.sort(files);
    return [...sorted.filter(beside), ...sorted.filter((file) => !beside(file))];
  }
}

// The fault suite: real processes killed, stopped, failed over. Its files run one at a time
// (test/faults/helpers/one-at-a-time.ts), since what they measure (recovery times, Redis time
// per call) would suffer from a neighbour; the two workers let the files that mostly wait
// (beside.ts) run beside them. The suite took ~385 s in line, ~250 s so.
export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 120_000,
    maxWorkers: 2,
    setupFiles: ['test/faults/helpers/one-at-a-time.ts'],
    sequence: { sequencer: BesideFirst },
    // The notes `skyq start` leaves for its embedded servers (src/redis/default-redis.ts) go
    // under the run's temporary folder, never the user's ~/.local/state.
    env: { XDG_STATE_HOME: join(tmpdir(), 'skyq-test-state') },
    globalSetup: ['test/helpers/global-setup.ts'],
    reporters: [
      'default',
      './test/helpers/summary-reporter.ts',
      // what docs/RELIABILITY.md is made from (npm run reliability:doc)
      './test/faults/helpers/run-reporter.ts',
    ],
  },
});
