// One JSON-lines log file per actor (logs/actor-3.log), written by pino on
// the actor's own thread into a size-rotated file (see log-file.ts). Every line
// carries the group; message lines carry the job id and an event name, which
// `skyq logs` filters on.
import { join } from 'node:path';
import { type Logger, type LoggerOptions, pino } from 'pino';
import { errors } from '../base/errors.js';
import { scrubError } from '../base/redact.js';
import { RotatingFile, type Rotation, rotationFromEnv } from './log-file.js';

export type { Logger };

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

export interface FileLogger {
  logger: Logger;
  /** writes everything logged so far; call before the thread ends */
  flush(): void;
  /** writes everything and gives the file back (a launcher in a process that goes on) */
  close(): void;
}

export function fileLogger(
  file: string,
  base: Record<string, unknown>,
  level = 'info',
  rotation: Rotation = rotationFromEnv(),
): FileLogger {
  const options: LoggerOptions = {
    level: checkLogLevel(level),
    base,
    timestamp: pino.stdTimeFunctions.epochTime,
    // An error logged whole (its stack, its cause, ioredis's command) never carries a password.
    serializers: { err: (error: unknown) => pino.stdSerializers.err(scrubError(error) as Error) },
  };
  const destination = new RotatingFile(file, rotation);
  return {
    logger: pino(options, destination),
    flush: () => destination.flush(),
    close: () => destination.close(),
  };
}
