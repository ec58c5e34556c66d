// A kept job's history entry, as lua/history.lua writes it:
//   "<attempts>|<due ms>|<duration ms>|<kind><result>"
import { decodeResult, type JobResult } from './result.js';

export interface HistoryEntry {
  attempts: number;
  dueAt: number;
  durationMs: number;
  result: JobResult;
}

export function decodeEntry(entry: Buffer): HistoryEntry {
  const first = entry.indexOf(0x7c);
  const second = entry.indexOf(0x7c, first + 1);
  const third = entry.indexOf(0x7c, second + 1);
  return {
    attempts: Number(entry.toString('latin1', 0, first)),
    dueAt: Number(entry.toString('latin1', first + 1, second)),
    durationMs: Number(entry.toString('latin1', second + 1, third)),
    result: decodeResult(entry.subarray(third + 1)),
  };
}
