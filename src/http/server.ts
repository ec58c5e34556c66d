// A small router on node:http: every request passes the access policy (host, token, CSRF for
// POST) before a route sees it, and every response carries headers that keep the page from
// being framed, sniffed or made to load anything from elsewhere.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errors, SkyqError } from '../base/errors.js';
import { type ListenAddress, urlOf } from './address.js';
import { checkQuery } from './params.js';
import type { AccessPolicy } from './policy.js';

export interface Reply {
  status?: number;
  type?: string;
  body: string | Buffer;
  headers?: Record<string, string>;
}

export interface RouteContext {
  request: IncomingMessage;
  url: URL;
  /** the path pattern's captured parts */
  params: string[];
  /** a POST's parsed JSON body */
  body: unknown;
}

export interface Route {
  method: 'GET' | 'POST';
  path: string | RegExp;
  /** served without the token (login page and its assets) */
  open?: boolean;
  /** what an unauthorised request gets instead of the plain 401 */
  unauthorized?: () => Reply;
  /** the query parameters it takes: any other is a 400 naming it (undefined: not checked) */
  query?: readonly string[];
  handle(context: RouteContext): Promise<Reply> | Reply;
}

const MAX_BODY_BYTES = 64 * 1024;

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

export const json = (value: unknown, status = 200): Reply => ({
  status,
  type: 'application/json; charset=utf-8',
  body: JSON.stringify(value),
});

export const problem = (status: number, error: string): Reply => json({ error }, status);

export class HttpServer {
  readonly #server: Server;
  readonly address: ListenAddress;

  private constructor(server: Server, address: ListenAddress) {
    this.#server = server;
    this.address = address;
  }

  get url(): string {
    return urlOf(this.address);
  }

  static async listen(
    address: ListenAddress,
    policy: AccessPolicy,
    routes: Route[],
  ): Promise<HttpServer> {
    const server = createServer((request, response) => {
      void dispatch(policy, routes, request, response);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(address.port, address.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const bound = server.address() as AddressInfo;
    return new HttpServer(server, { host: address.host, port: bound.port });
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeAllConnections();
    await closed;
  }
}

async function dispatch(
  policy: AccessPolicy,
  routes: Route[],
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  let reply: Reply;
  try {
    reply = await answer(policy, routes, request);
  } catch (error) {
    // Bad input is the caller's (400); a flow refusal is the queue's state (409: a child its
    // parent waits for); anything else is ours.
    const code = error instanceof SkyqError ? error.code : undefined;
    reply =
      code === 'ERR_SKYQ_INVALID_OPTION'
        ? problem(400, (error as Error).message)
        : code === 'ERR_SKYQ_FLOW'
          ? problem(409, (error as Error).message)
          : problem(500, error instanceof Error ? error.message : String(error));
  }
  if (response.headersSent) return;
  response.writeHead(reply.status ?? 200, {
    ...SECURITY_HEADERS,
    'content-type': reply.type ?? 'text/plain; charset=utf-8',
    ...reply.headers,
  });
  response.end(reply.body);
}

async function answer(
  policy: AccessPolicy,
  routes: Route[],
  request: IncomingMessage,
): Promise<Reply> {
  if (!policy.hostAllowed(request)) return problem(403, 'this server answers loopback names only');
  const url = new URL(request.url ?? '/', 'http://skyq.invalid');
  // A malformed escape is the client's mistake, answered before any route (or the token) is asked.
  if (!wellEscaped(url.pathname)) return problem(400, `malformed % escape in ${url.pathname}`);
  const matching = routes.filter((r) => matchPath(r.path, url.pathname) !== null);
  const route = matching.find((r) => r.method === request.method);
  if (!route) {
    if (matching.length === 0) return problem(404, `no such page: ${url.pathname}`);
    const allowed = matching.map((r) => r.method);
    return {
      ...problem(405, `use ${allowed.join(' or ')}`),
      headers: { allow: allowed.join(', ') },
    };
  }
  if (!route.open && !policy.authorized(request)) {
    return route.unauthorized?.() ?? problem(401, 'missing or wrong token');
  }
  if (route.query) checkQuery(url, route.query);
  let body: unknown;
  if (route.method === 'POST') {
    const refused = policy.csrfProblem(request);
    if (refused) return problem(403, refused);
    body = await readJson(request);
  }
  return route.handle({ request, url, params: matchPath(route.path, url.pathname) ?? [], body });
}

function wellEscaped(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

function matchPath(pattern: string | RegExp, path: string): string[] | null {
  if (typeof pattern === 'string') return pattern === path ? [] : null;
  const match = pattern.exec(path);
  return match ? match.slice(1).map((part) => decodeURIComponent(part)) : null;
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw errors.invalidOption('body', `over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw errors.invalidOption('body', 'not valid JSON');
  }
}
