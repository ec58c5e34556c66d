// What a handler threw, read so that reading it cannot throw again. A handler may throw
// anything: a string, null, an object without a prototype (String() of it throws), an object or
// Error whose getters throw, a Proxy whose traps throw. Reading those the plain way threw inside
// the actor's failure path, which ended its thread and cost every job it held an attempt.
import { stackOf } from './error-stack.js';

/** A thrown value once read: readThrown() hands one back as it is (it is read once). */
export class Thrown {
  constructor(
    /** the text a failure records: an Error's message (else its name), or the value as text */
    readonly message: string,
    readonly name: string,
    /** '' when there is none (or it could not be read) */
    readonly stack: string,
    /** an Error's `code`, when it is a string (ERR_SKYQ_NO_HANDLER decides not to retry) */
    readonly code?: string,
  ) {}
}

/** `read()`, or `undefined` when it throws. */
function attempt<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

/** The value as text, or why it has none. */
function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  const text = attempt(() => String(value));
  if (text !== undefined) return text;
  const tag = attempt(() => Object.prototype.toString.call(value)) ?? `[${typeof value}]`;
  return `a thrown value that cannot be turned into text (${tag})`;
}

export function readThrown(error: unknown): Thrown {
  // instanceof asks a Proxy's getPrototypeOf trap, which may throw too.
  if (attempt(() => error instanceof Thrown) === true) return error as Thrown;
  const isError = attempt(() => error instanceof Error) === true;
  if (!isError) return new Thrown(textOf(error), 'Error', '');
  const fields = error as { name?: unknown; message?: unknown; code?: unknown };
  const rawName = attempt(() => fields.name);
  const name = typeof rawName === 'string' && rawName !== '' ? rawName : 'Error';
  let text: string;
  try {
    const raw = fields.message;
    text = raw === undefined ? '' : textOf(raw);
  } catch {
    text = `${name} whose message cannot be read`;
  }
  const message = text === '' ? name : text;
  const code = attempt(() => fields.code);
  const stack = attempt(() => stackOf(error)) ?? '';
  return new Thrown(message, name, stack, typeof code === 'string' ? code : undefined);
}
