import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
    // Files share their worker's modules: importing skyq, ioredis and the helpers again for
    // each of 160 files took 120–149 s of the suite's CPU (docs/testing.md). Each file still
    // closes what it opens: a client left reconnecting or an environment variable left changed
    // now reaches the files after it.
    isolate: false,
    // The notes `skyq start` leaves for its embedded servers (src/redis/default-redis.ts) go
    // under the run's temporary folder, never the user's ~/.local/state.
    env: { XDG_STATE_HOME: join(tmpdir(), 'skyq-test-state') },
    globalSetup: ['test/helpers/global-setup.ts'],
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
});
