// Every error skyq throws is made here, by name, so callers can tell them
// apart (`err.code`) and messages stay consistent.
import { redactText, scrubError } from './redact.js';

/**
 * What kind of failure a SkyqError is: its `code`, to tell errors apart without reading messages.
 */
export type SkyqErrorCode =
  | 'ERR_SKYQ_INVALID_OPTION'
  | 'ERR_SKYQ_BODY'
  | 'ERR_SKYQ_MALFORMED_RECORD'
  | 'ERR_SKYQ_CLOSED'
  | 'ERR_SKYQ_REDIS'
  | 'ERR_SKYQ_ACTOR'
  | 'ERR_SKYQ_TIMEOUT'
  | 'ERR_SKYQ_PARTIAL_ADD'
  | 'ERR_SKYQ_UNREACHABLE'
  | 'ERR_SKYQ_NOPERM'
  | 'ERR_SKYQ_AUTH'
  | 'ERR_SKYQ_EVICTION'
  | 'ERR_SKYQ_FORMAT'
  | 'ERR_SKYQ_NO_HANDLER'
  | 'ERR_SKYQ_NOT_FOUND'
  | 'ERR_SKYQ_CANCELLED'
  | 'ERR_SKYQ_LISTEN'
  | 'ERR_SKYQ_FLOW';

/**
 * Set on every SkyqError, so that `instanceof SkyqError` holds across copies of this module: the
 * CLI's bundle and the library it loads for `skyq bench`, or two installs of skyq in one app.
 */
const MARK = Symbol.for('skyq.SkyqError');

/**
 * Every error skyq throws for a reason it knows: a one-line message, a `code`, and the option or
 * field it is about.
 */
export class SkyqError extends Error {
  /** `instanceof SkyqError` asks for the mark (any copy's); a subclass asks for its own class. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class instanceof was asked of
    if (this !== SkyqError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return typeof value === 'object' && value !== null && MARK in value;
  }

  /** what kind of failure it is */
  readonly code: SkyqErrorCode;
  /** The option or field the error is about, when there is one. */
  readonly field: string | undefined;

  constructor(code: SkyqErrorCode, message: string, field?: string, cause?: unknown) {
    // A cause is printed by Node with everything in it: no password may be left there.
    super(message, cause === undefined ? undefined : { cause: scrubError(cause) });
    this.name = 'SkyqError';
    this.code = code;
    this.field = field;
    Object.defineProperty(this, MARK, { value: true }); // not enumerable: logs do not show it
  }
}

/** addBulk when some calls failed: which items went in (their ids) and which did not, and why. */
export class AddBulkError extends SkyqError {
  /** per item, in order: its id when it was added, null when it was not */
  readonly ids: (string | null)[];
  /** each item that was not added: its index in the call's list, and why */
  readonly failures: {
    /** its place in the list given to addBulk */
    index: number;
    /** why it was not added */
    reason: string;
  }[];
  /**
   * Sends the failed items again with the ids they were given, so an item whose call failed
   * after Redis had applied it (a connection lost mid-call) is not added twice. Resolves the
   * full id list; rejects with another AddBulkError when some fail again.
   */
  readonly retry: () => Promise<string[]>;

  constructor(
    ids: (string | null)[],
    failures: { index: number; reason: string }[],
    retry: () => Promise<string[]>,
    cause: unknown,
  ) {
    const added = ids.length - failures.length;
    super(
      'ERR_SKYQ_PARTIAL_ADD',
      `addBulk: ${failures.length} of ${ids.length} items were not added ` +
        `(${failures[0]?.reason}); ${added} were (their ids are in .ids); .retry() sends the rest again`,
      undefined,
      cause,
    );
    this.name = 'AddBulkError';
    this.ids = ids;
    this.failures = failures;
    this.retry = retry;
  }
}

/** A flow's ids, in the shape of its tree (queue.flows.add). */
export interface FlowIds {
  /** the node's id */
  id: string;
  /** its children's ids, in the order given ([] for a leaf) */
  children: FlowIds[];
}

/**
 * flows.add when some of its calls failed: the flow is not complete. Its parents wait (none
 * becomes due while a child is missing) until `retry()` adds the rest under the same ids.
 */
export class FlowAddError extends SkyqError {
  /** every node's id, in the tree's shape: those in `missing` are not added yet */
  readonly ids: FlowIds;
  /** the ids not added (or whose add's outcome is unknown) */
  readonly missing: string[];
  /**
   * Sends what is missing again, under the ids it was given (a node already there is left as
   * it is); resolves the flow's ids, or rejects with another FlowAddError.
   */
  readonly retry: () => Promise<FlowIds>;

  constructor(ids: FlowIds, missing: string[], retry: () => Promise<FlowIds>, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(
      'ERR_SKYQ_PARTIAL_ADD',
      `flows.add: ${missing.length} nodes of the flow ${ids.id} were not added (${reason}); ` +
        'its parents wait for them: .retry() adds them under the same ids',
      undefined,
      cause,
    );
    this.name = 'FlowAddError';
    this.ids = ids;
    this.missing = missing;
    this.retry = retry;
  }
}

/**
 * The factories of every SkyqError skyq throws, by name (for code that wraps skyq and wants the
 * same messages).
 */
export const errors = {
  /** an option or argument skyq cannot use: names it, says why, and shows the value */
  invalidOption: (field: string, problem: string, value?: unknown) =>
    new SkyqError(
      'ERR_SKYQ_INVALID_OPTION',
      `${field}: ${problem}${value === undefined ? '' : ` (got ${describe(value)})`}`,
      field,
    ),
  /** a body skyq cannot store (not serialisable, too large) */
  body: (field: string, problem: string, cause?: unknown) =>
    new SkyqError('ERR_SKYQ_BODY', `${field}: ${problem}`, field, cause),
  /** a stored record skyq cannot read */
  malformedRecord: (id: string, problem: string) =>
    new SkyqError('ERR_SKYQ_MALFORMED_RECORD', `message ${id}: malformed record: ${problem}`),
  /** a call on a closed queue */
  closed: (what: string) => new SkyqError('ERR_SKYQ_CLOSED', `${what} is closed`),
  /** Redis answered in a way skyq cannot go on from */
  redis: (problem: string, cause?: unknown) =>
    new SkyqError('ERR_SKYQ_REDIS', problem, undefined, cause),
  /** an actor thread could not start or failed */
  actor: (problem: string, cause?: unknown) =>
    new SkyqError('ERR_SKYQ_ACTOR', problem, undefined, cause),
  /** something skyq waited for did not answer in time */
  timeout: (what: string, ms: number) =>
    new SkyqError('ERR_SKYQ_TIMEOUT', `${what} did not answer within ${ms} ms`),
  /** queue.waitFor gave up */
  waitTimeout: (id: string, ms: number) =>
    new SkyqError('ERR_SKYQ_TIMEOUT', `waitFor ${id}: the job did not finish within ${ms} ms`),
  /** queue.waitFor: the job was cancelled while waited for (by anyone, a schedule's change too) */
  cancelled: (id: string) =>
    new SkyqError('ERR_SKYQ_CANCELLED', `waitFor ${id}: the job was cancelled`),
  /** an id that is not (or no longer) anywhere */
  notFound: (id: string, what: string) =>
    new SkyqError('ERR_SKYQ_NOT_FOUND', `no message ${id} (${what})`),
  /** `where` is already redacted (see redact.ts); `reason` is short and readable */
  unreachable: (where: string, reason: string, cause?: unknown) =>
    new SkyqError(
      'ERR_SKYQ_UNREACHABLE',
      `cannot reach Redis at ${where}: ${reason}`,
      undefined,
      cause,
    ),
  /** the HTTP server could not take its address (a port in use, an address not here, privileges) */
  listen: (address: string, problem: string) =>
    new SkyqError('ERR_SKYQ_LISTEN', `http: cannot listen on ${address}: ${problem}`, 'http'),
  /** Redis refused the user name or password (or wants one); `where` is already redacted */
  login: (where: string, reason: string, cause?: unknown) =>
    new SkyqError(
      'ERR_SKYQ_AUTH',
      `Redis at ${where} refused the login: ${reason}`,
      undefined,
      cause,
    ),
  /** a server whose maxmemory-policy can delete queued messages; `fix` is the command to run */
  eviction: (server: string, policy: string, fix: string) =>
    new SkyqError(
      'ERR_SKYQ_EVICTION',
      `Redis at ${server} has maxmemory-policy ${policy}, which deletes queued messages when memory is full: ` +
        `run ${fix} there (and set it in redis.conf), or pass --allow-eviction (allowEviction: true) to run anyway`,
      'maxmemory-policy',
    ),
  /** the data under a prefix was written by a newer skyq than this one */
  formatTooNew: (key: string, stored: number, known: number, cause?: unknown) =>
    new SkyqError(
      'ERR_SKYQ_FORMAT',
      `a newer skyq (format ${stored}, in ${key}) is running on this Redis; this skyq (format ${known}) neither reads nor writes its data: upgrade skyq before running it against this data`,
      undefined,
      cause,
    ),
  /** a job whose name neither a command table entry nor a '*' entry handles */
  noHandler: (name: string | undefined) =>
    new SkyqError(
      'ERR_SKYQ_NO_HANDLER',
      name === undefined ? 'no handler for unnamed jobs' : `no handler for ${JSON.stringify(name)}`,
    ),
  /** cancel of a flow child whose parent waits for it (queue.flows) */
  flowChildWaitedFor: (id: string, parent: string) =>
    new SkyqError(
      'ERR_SKYQ_FLOW',
      `cancel ${id}: its flow parent ${parent} waits for it; cancel the parent (its pending children go with it), or add the child with optional: true`,
    ),
  /** flows.add of caller ids that pending messages hold: nothing of the flow was written */
  flowIdsTaken: (taken: { id: string; group: number }[]) => {
    const shown = taken.slice(0, 5).map(({ id, group }) => `${id} (group ${group})`);
    const more = taken.length > 5 ? ` and ${taken.length - 5} more` : '';
    return new SkyqError(
      'ERR_SKYQ_FLOW',
      `flows.add: ${taken.length === 1 ? 'an id is' : 'ids are'} taken by pending messages: ${shown.join(', ')}${more}; nothing was added`,
      'flow',
    );
  },
  /** Redis's NOPERM reply, with the ACL rule a skyq user needs */
  noPermission: (reply: string, rule: string, cause?: unknown) =>
    new SkyqError(
      'ERR_SKYQ_NOPERM',
      `Redis refused a command: ${reply}. A skyq user needs this ACL rule: ${rule} (see docs/OPERATIONS.md)`,
      undefined,
      cause,
    ),
};

function describe(value: unknown): string {
  if (typeof value === 'string') {
    // A URL's password is masked before the value is cut short, so no part of it can show.
    const shown = redactText(value);
    return JSON.stringify(shown.length > 40 ? `${shown.slice(0, 40)}…` : shown);
  }
  if (typeof value === 'number' || typeof value === 'boolean' || value === null)
    return String(value);
  if (typeof value === 'bigint') return `${value}n`;
  return typeof value;
}
