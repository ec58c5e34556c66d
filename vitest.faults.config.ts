import { defineConfig } from 'vitest/config';

// The fault suite: real processes killed, stopped, failed over; one file at a time, since
// what it measures (recovery times, Redis time per call) would suffer from a neighbour.
export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 120_000,
    fileParallelism: false,
    globalSetup: ['test/helpers/global-setup.ts'],
    reporters: [
      'default',
      './test/helpers/summary-reporter.ts',
      // what docs/RELIABILITY.md is made from (npm run reliability:doc)
      './test/faults/helpers/run-reporter.ts',
    ],
  },
});
