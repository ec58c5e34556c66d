// One JSON-lines log file per actor (logs/actor-3.log), written by pino on
// the actor's own thread. Every line carries the group; message lines carry
// the job id and an event name, which `skyq logs` filters on.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { destination, type Logger, type LoggerOptions, pino } from 'pino';

export type { Logger };

export const DEFAULT_LOG_DIR = 'logs';

export function actorLogFile(logDir: string, group: number): string {
  return join(logDir, `actor-${group}.log`);
}

export function launcherLogFile(logDir: string): string {
  return join(logDir, 'launcher.log');
}

export interface FileLogger {
  logger: Logger;
  /** writes what is buffered; call before the thread ends */
  flush(): void;
}

export function fileLogger(
  file: string,
  base: Record<string, unknown>,
  level = 'info',
): FileLogger {
  mkdirSync(join(file, '..'), { recursive: true });
  const stream = destination({ dest: file, sync: false, mkdir: true });
  const options: LoggerOptions = { level, base, timestamp: pino.stdTimeFunctions.epochTime };
  return {
    logger: pino(options, stream),
    flush: () => {
      try {
        stream.flushSync();
      } catch {
        // Nothing buffered yet (the stream opens lazily): nothing to flush.
      }
    },
  };
}
