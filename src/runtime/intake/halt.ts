// The intake while a newer skyq has raised the data format (src/queue/format.ts). Its moves
// out of the source lists and sets run in their own slots, which hold no format key, so
// nothing refuses them: only the adds after them are refused. An intake that went on moving
// filled its holding lists with items it could not add, and its beat (refused too, in the
// intake's slot) no longer kept them: a newer launcher adopted them and removed them from the
// registry, and what was moved after that stayed in a holding list nobody knew of, for good.
// So a beat refused for a newer format halts the lanes: they move nothing until a beat goes
// through again, and what their holding lists hold waits there for a newer launcher to adopt.
import type { Logger } from 'pino';
import { FORMAT_VERSION } from '../../base/format-version.js';
import { newerFormatOf } from '../../redis/explain.js';

/** How often halted lanes look whether they may move again (and whether they are to stop). */
export const HALTED_RECHECK_MS = 250;

export class IntakeHalt {
  readonly #log: Logger;
  #halted = false;

  constructor(log: Logger) {
    this.#log = log;
  }

  /** The lanes move nothing now. */
  get halted(): boolean {
    return this.#halted;
  }

  /** A beat failed with `error`: true, halting (said once), when a newer format refused it. */
  refused(error: unknown): boolean {
    const stored = newerFormatOf(error);
    if (stored === null) return false;
    if (!this.#halted) {
      this.#halted = true;
      this.#log.error(
        { event: 'format-newer', format: stored },
        `a newer skyq (format ${stored}) is running on this Redis; this launcher's intake (format ${FORMAT_VERSION}) stops moving items`,
      );
    }
    return true;
  }

  /** A beat went through: the format is ours again. */
  beat(): void {
    if (!this.#halted) return;
    this.#halted = false;
    this.#log.warn({ event: 'format-ok' }, 'intake: the data format is ours again');
  }
}
