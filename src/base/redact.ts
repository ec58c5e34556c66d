// Credentials never reach output, logs or errors: every place that shows a
// Redis URL (banners, titles, error messages, log lines) passes it through
// here first. The user name stays (it tells which ACL user is meant); the
// password, wherever a URL can carry one, becomes `***`. When in doubt this
// masks too much rather than too little.

const MASK = '***';

/** ?password=… or &pass=… in a query string (ioredis reads URL query options). */
const QUERY_SECRET = /([?&](?:password|pass|pwd|auth)=)[^&#\s"']*/gi;
/** scheme://userinfo@ inside free text: up to the last @ of the same word. */
const URL_WITH_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s"'<>]*)@/gi;

function maskUserinfo(userinfo: string): string {
  const colon = userinfo.indexOf(':');
  // "redis://secret@host" is read by some clients as a password alone: mask it whole.
  return colon === -1 ? `:${MASK}` : `${userinfo.slice(0, colon)}:${MASK}`;
}

/**
 * One URL (valid or not) with its password replaced by ***. Everything between
 * `://` (or the start, when there is no scheme) and the last `@` is userinfo, so a
 * password holding an unescaped `/` or `@` is masked whole too.
 */
export function redactUrl(url: string): string {
  const at = url.lastIndexOf('@');
  const withoutQuerySecret = (text: string) => text.replace(QUERY_SECRET, `$1${MASK}`);
  if (at === -1) return withoutQuerySecret(url);
  const schemeEnd = url.indexOf('://');
  const start = schemeEnd === -1 || schemeEnd > at ? 0 : schemeEnd + 3;
  return withoutQuerySecret(
    `${url.slice(0, start)}${maskUserinfo(url.slice(start, at))}${url.slice(at)}`,
  );
}

/** Every URL inside a longer text (an error message, a log line) redacted. */
export function redactText(text: string): string {
  return text
    .replace(URL_WITH_USERINFO, (_, scheme: string, userinfo: string) => {
      return `${scheme}${maskUserinfo(userinfo)}@`;
    })
    .replace(QUERY_SECRET, `$1${MASK}`);
}

/** Commands whose arguments carry a password (AUTH, HELLO … AUTH, MIGRATE … AUTH, ACL SETUSER …). */
const SECRET_COMMANDS = new Set(['auth', 'hello', 'migrate', 'acl', 'config', 'sentinel']);

interface CommandNote {
  name?: unknown;
  args?: unknown;
}

/**
 * Takes every password out of an error, wherever Node or a logger could print it: the message
 * and stack (URLs), ioredis's `command.args` of a login (`AUTH user password`), and the same in
 * every error it links to (`cause`, a cluster's `lastNodeError`, an AggregateError's `errors`).
 * Changes the errors in place, so a reference kept elsewhere is clean too; returns `error`.
 */
export function scrubError<T>(error: T, seen = new Set<unknown>()): T {
  if (typeof error !== 'object' || error === null || seen.has(error)) return error;
  seen.add(error);
  const target = error as Record<string, unknown> & Partial<Error>;
  for (const field of ['message', 'stack'] as const) {
    const text = target[field];
    if (typeof text === 'string') {
      const clean = redactText(text);
      if (clean !== text) target[field] = clean;
    }
  }
  const command = target.command as CommandNote | undefined;
  if (command && typeof command.name === 'string' && Array.isArray(command.args)) {
    if (SECRET_COMMANDS.has(command.name.toLowerCase())) {
      // The user name stays (it says which ACL user was meant); nothing after it does.
      const user = command.name.toLowerCase() === 'auth' && command.args.length === 2;
      command.args = user ? [command.args[0], MASK] : [MASK];
    }
  }
  for (const linked of [target.cause, target.lastNodeError]) scrubError(linked, seen);
  if (Array.isArray(target.errors)) for (const inner of target.errors) scrubError(inner, seen);
  return error;
}
