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
