// One JSON-lines log file per actor (logs/actor-3.log), written by pino on
// the actor's own thread into a size-rotated file (see log-file.ts). Every line
// carries the group; message lines carry the job id and an event name, which
// `skyq logs` filters on.
import { type Logger, type LoggerOptions, pino } from 'pino';
import { scrubError } from '../base/redact.js';
import { RotatingFile, type Rotation, rotationFromEnv } from './log-file.js';
import { checkLogLevel } from './log-names.js';

export type { Logger };

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
