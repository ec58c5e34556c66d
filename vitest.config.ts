import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The fault suite (kill -9, failover, 5 GB of bodies) runs on its own: npm run test:faults.
    exclude: ['test/faults/**', 'node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Suites start their own redis-server processes and mostly wait on them and on the
    // processes they spawn (a full run keeps about one of the two cores busy), so three
    // files run at once.
    fileParallelism: true,
    maxWorkers: 3,
    globalSetup: ['test/helpers/global-setup.ts'],
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
});
