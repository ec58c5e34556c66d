// The no-op handler the benchmarks run in the actors: reports starts every 50 ms.
import { startReporter } from './start-reporter.js';

export default startReporter((flush) => setTimeout(flush, 50));
