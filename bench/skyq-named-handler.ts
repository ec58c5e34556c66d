// The bench's no-op handler as a command table, for named jobs (targets --names N): each name
// job.0 … job.<N−1> is looked up (skynet's CMD[cmd]); names past the table fall to '*'.
import { startReporter } from './start-reporter.js';

const report = startReporter((flush) => setTimeout(flush, 50));
const table: Record<string, typeof report> = { '*': report };
for (let i = 0; i < 100; i++) table[`job.${i}`] = report;

export default table;
