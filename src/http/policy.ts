// Who may talk to the HTTP server, and which requests may change anything.
//
// - Token: off loopback a token is required (`--auth-token` / SKYQ_DASHBOARD_TOKEN). Scrapers send
//   it as `Authorization: Bearer …`; the page's login form trades it for an HttpOnly, SameSite=
//   Strict cookie holding a hash of it (the token itself never travels back to the browser).
// - Host: a loopback server answers only requests addressed to a loopback name, so a web page
//   whose domain was re-pointed at 127.0.0.1 (DNS rebinding) cannot read it.
// - CSRF: a change is a POST carrying the X-Skyq-Request header and a JSON body. A foreign page
//   cannot send either without a CORS preflight, which this server never grants (it sends no
//   Access-Control-* header), and a plain HTML form can set neither. On top of that the browser's
//   own word is checked: Origin, when sent, must be this server, and Sec-Fetch-Site, when sent,
//   must be same-origin.
// - Behind a reverse proxy (TLS, another name): `--public-url` (SKYQ_PUBLIC_URL) names the URL
//   people use. Its origin is then the only one accepted, besides http:// on the host the
//   request came to, and its host is accepted as a Host header (a loopback server otherwise
//   answers loopback names only).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { errors } from '../base/errors.js';
import { isLoopbackHost, type ListenAddress, urlOf } from './address.js';

export const SESSION_COOKIE = 'skyq_session';
export const CSRF_HEADER = 'x-skyq-request';
export const TOKEN_ENV = 'SKYQ_DASHBOARD_TOKEN';
export const PUBLIC_URL_ENV = 'SKYQ_PUBLIC_URL';

const digest = (text: string) => createHash('sha256').update(text).digest();

export class AccessPolicy {
  readonly #token: Buffer | null;
  readonly #session: string | null;
  readonly #loopback: boolean;
  /** the public URL's origin and host, when one is given */
  readonly #public: { origin: string; host: string } | null;

  constructor(
    address: ListenAddress,
    token: string | null | undefined,
    publicUrl: string | null = null,
  ) {
    this.#loopback = isLoopbackHost(address.host);
    this.#public = publicUrl === null ? null : parsePublicUrl(publicUrl);
    if (token !== undefined && token !== null && token.length < 8) {
      throw errors.invalidOption('auth-token', 'must be at least 8 characters');
    }
    if (!this.#loopback && !token) {
      throw errors.invalidOption(
        'http',
        `${urlOf(address)} is reachable from other machines: give --auth-token or set ${TOKEN_ENV}`,
      );
    }
    this.#token = token ? digest(token) : null;
    this.#session = token ? digest(`skyq-session\0${token}`).toString('hex') : null;
  }

  get needsToken(): boolean {
    return this.#token !== null;
  }

  /** False for a loopback server reached under a foreign name (DNS rebinding). */
  hostAllowed(request: IncomingMessage): boolean {
    const host = request.headers.host;
    if (this.#public && host?.toLowerCase() === this.#public.host) return true;
    if (!this.#loopback) return true;
    if (!host) return false;
    try {
      return isLoopbackHost(new URL(`http://${host}`).hostname);
    } catch {
      return false;
    }
  }

  /** A bearer token or the session cookie, when a token is set. */
  authorized(request: IncomingMessage): boolean {
    if (!this.#token || !this.#session) return true;
    const bearer = /^Bearer (.+)$/i.exec(request.headers.authorization ?? '');
    if (bearer && this.tokenMatches(bearer[1] as string)) return true;
    const cookie = cookieValue(request.headers.cookie, SESSION_COOKIE);
    return cookie !== null && sameText(cookie, this.#session);
  }

  tokenMatches(given: string): boolean {
    return this.#token !== null && timingSafeEqual(digest(given), this.#token);
  }

  /** The Set-Cookie header that logs a browser in. */
  sessionCookie(): string {
    return `${SESSION_COOKIE}=${this.#session ?? ''}; HttpOnly; SameSite=Strict; Path=/`;
  }

  /** Why a state-changing request is refused, or null when it may go on. */
  csrfProblem(request: IncomingMessage): string | null {
    if (request.headers[CSRF_HEADER] !== '1') return `missing ${CSRF_HEADER} header`;
    const type = request.headers['content-type'] ?? '';
    if (!/^application\/json\b/i.test(type)) return 'body must be application/json';
    const site = request.headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin') return `cross-site request (${site})`;
    const origin = request.headers.origin;
    if (origin === undefined) return null;
    if (this.#public && origin.toLowerCase() === this.#public.origin) return null;
    // Plain http on the host the request came to: this server itself, unless that host is the
    // public one (reached through the proxy, only the public origin is the page's).
    const host = request.headers.host;
    const direct = !this.#public || host?.toLowerCase() !== this.#public.host;
    if (direct && origin === `http://${host}`) return null;
    return this.#public
      ? `request from another origin (only ${this.#public.origin} is accepted, from --public-url)`
      : 'request from another origin (behind a proxy or HTTPS, give --public-url)';
  }
}

/** An http(s) URL's origin and host, lower case; anything else is refused with one line. */
function parsePublicUrl(text: string): { origin: string; host: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw errors.invalidOption(
      'public-url',
      'expected a URL such as https://queue.example.com/',
      text,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw errors.invalidOption('public-url', 'must start with https:// or http://', text);
  if (url.username || url.password)
    throw errors.invalidOption('public-url', 'must not carry a user name or password');
  return { origin: url.origin.toLowerCase(), host: url.host.toLowerCase() };
}

function cookieValue(header: string | undefined, name: string): string | null {
  for (const part of (header ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return null;
}

function sameText(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}
