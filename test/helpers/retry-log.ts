/**
 * Retries kept on purpose (each says in a comment what noise it absorbs) must not hide a trend:
 * each one is printed and appended to .test-tmp/retries/retries.jsonl (one JSON line per retry,
 * never cleared by the suite), so a test that starts needing its retry every run shows.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const DIR = fileURLToPath(new URL('../../.test-tmp/retries/', import.meta.url));

/** Records that `test` runs attempt `attempt` (2 = the first retry) because of `why`. */
export function noteRetry(test: string, attempt: number, why: string): void {
  const line = { at: new Date().toISOString(), test, attempt, why: why.slice(0, 2000) };
  console.warn(`retry: ${test}, attempt ${attempt}: ${line.why.split('\n')[0]}`);
  mkdirSync(DIR, { recursive: true });
  appendFileSync(`${DIR}retries.jsonl`, `${JSON.stringify(line)}\n`);
}
