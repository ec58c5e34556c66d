import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// The fault suite: real processes killed, stopped, failed over; one file at a time, since
// what it measures (recovery times, Redis time per call) would suffer from a neighbour.
export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 120_000,
    fileParallelism: false,
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
