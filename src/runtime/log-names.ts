// Where the log files go and the levels they take: what `skyq logs` and the flag checks of
// `skyq start` need, without loading pino (logger.ts), which writes them.
import { join } from 'node:path';
import { errors } from '../base/errors.js';

export const DEFAULT_LOG_DIR = 'logs';

/** pino's levels, quietest last. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Refuses a level pino does not know, so a typo fails at once rather than inside an actor. */
export function checkLogLevel(level: unknown, field = 'logLevel'): LogLevel {
  if (typeof level !== 'string' || !(LOG_LEVELS as readonly string[]).includes(level))
    throw errors.invalidOption(field, `expected one of ${LOG_LEVELS.join(', ')}`, level);
  return level as LogLevel;
}

export function actorLogFile(logDir: string, group: number): string {
  return join(logDir, `actor-${group}.log`);
}

export function launcherLogFile(logDir: string): string {
  return join(logDir, 'launcher.log');
}

/** The intake's (src/runtime/intake/), written on the coordinator's thread. */
export function intakeLogFile(logDir: string): string {
  return join(logDir, 'intake.log');
}
