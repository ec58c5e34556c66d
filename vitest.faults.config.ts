import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { ALONE, BESIDE, listed } from './test/faults/helpers/sharing.js';

/**
 * The files that run beside the others start first, so their waits overlap the whole run; then
 * the ones that run alone, one after another, while nothing else waits for a slot; then the
 * rest, two at a time.
 */
class BesideFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) =>
      listed(BESIDE, file.moduleId) ? 0 : listed(ALONE, file.moduleId) ? 1 : 2;
    // A stable sort: vitest's own order (longest first, from its cache) within each rank.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

// The fault suite: real processes killed, stopped, failed over. Its files run two at a time, the
// ones that time something tight alone, and the ones that mostly wait beside them all
// (test/faults/helpers/two-at-a-time.ts, sharing.ts): three workers. The suite took ~385 s in
// line, ~240 s one at a time beside the outage file, 185–210 s so.
export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 120_000,
    maxWorkers: 3,
    setupFiles: ['test/faults/helpers/two-at-a-time.ts'],
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
