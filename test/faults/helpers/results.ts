/**
 * What each fault cost, as the suite measured it: one JSON file per fault under
 * .test-tmp/faults/results/, rendered into docs/RELIABILITY.md by `npm run reliability:doc`
 * (scripts/reliability-doc.mjs). The run's start clears old results (run-record.ts), so the
 * doc only ever shows one run.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** .test-tmp/faults/results at the project's root (the run reporter loads this file too). */
export const RESULTS_DIR = fileURLToPath(
  new URL('../../../.test-tmp/faults/results', import.meta.url),
);

export interface FaultCost {
  /** file name and sort key, e.g. "1-launcher-kill" */
  key: string;
  /** what was done, for the table */
  fault: string;
  /** acknowledged messages the test counted */
  messages: number;
  /** leased messages at the fault (see how each test reads them) */
  inFlight: number;
  /** from the fault to the first message claimed after it and started */
  recoveryMs: number;
  /** from the fault until every message leased at the fault had finished (null: none leased) */
  allBackMs: number | null;
  duplicates: number;
  lost: number;
  notes?: string;
}

export function saveCost(cost: FaultCost): void {
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(join(RESULTS_DIR, `${cost.key}.json`), `${JSON.stringify(cost, null, 2)}\n`);
  console.log(`fault cost: ${JSON.stringify(cost)}`);
}

/** A fuzz test's cases, saved once they all passed. */
export interface FuzzRun {
  key: string;
  /** what was generated */
  what: string;
  cases: number;
  seed: number;
  /** what every case had to satisfy */
  checked: string;
}

export function saveFuzz(run: FuzzRun): void {
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(join(RESULTS_DIR, `${run.key}.json`), `${JSON.stringify(run, null, 2)}\n`);
  console.log(`fuzz: ${JSON.stringify(run)}`);
}
