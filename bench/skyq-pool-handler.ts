// The no-op handler the benchmarks run on the piscina pool. A pool thread waits for its next task
// in Atomics.wait, so a timer set in one task may not fire until the next: each task's starts
// go out before the task ends instead.
import { startReporter } from './start-reporter.js';

export default startReporter(queueMicrotask);
