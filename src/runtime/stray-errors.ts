// A handler's code may throw from a timer, or leave a promise rejected, after its job ended.
// Node ends the thread for either, and every job the actor holds then loses an attempt to its
// lease ("the actor never dies of a message" did not hold). Such an error is logged and kept as
// the actor's last error instead, and the thread goes on. One whose stack runs through skyq's
// own code still ends the thread as before (the supervisor restarts it): skyq's state after its
// own failure is not to be trusted.
import { readThrown } from '../queue/thrown.js';
import type { Logger } from './logger.js';
import type { StatBlock } from './stat-block.js';

/** The file this code runs from (the actor's bundle), from a stack made here. */
function ownFile(): string | undefined {
  const frame = new Error().stack?.split('\n')[1] ?? '';
  return /\(?((?:file:\/\/)?\/[^():]+):\d+:\d+\)?$/.exec(frame.trim())?.[1];
}

/** Keeps the thread alive through errors the handler's code leaves behind; returns the undo. */
export function surviveStrayErrors(logger: Logger, stats: StatBlock): () => void {
  const own = ownFile();
  const stray = (kind: 'uncaught exception' | 'unhandled rejection') => (error: unknown) => {
    const { message, stack } = readThrown(error);
    if (own !== undefined && stack.includes(own)) throw error;
    stats.lastError = `${kind} in handler code: ${message}`;
    const fields = { event: 'stray-error', kind, err: message };
    logger.error(stack ? { ...fields, stack } : fields, `${kind} in handler code`);
  };
  const onException = stray('uncaught exception');
  const onRejection = stray('unhandled rejection');
  process.on('uncaughtException', onException);
  process.on('unhandledRejection', onRejection);
  return () => {
    process.off('uncaughtException', onException);
    process.off('unhandledRejection', onRejection);
  };
}
