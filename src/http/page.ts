// The dashboard page: plain HTML, CSS and ES modules in ./page/, read once and served as they
// are (no build step, nothing from a CDN). The build copies ./page/ next to the compiled module.
// Only the login form and what it needs are served without the token.
import { readFileSync } from 'node:fs';
import type { AccessPolicy } from './policy.js';
import { problem, type Reply, type Route } from './server.js';

// Spelled from the folder above, so that it holds from dist/src/http/ and from the CLI's bundle
// in dist/src/cli/ alike (scripts/build.mjs).
const PAGE_DIR = new URL('../http/page/', import.meta.url);

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};

/** Every file the page has; anything else is a 404 (no paths from the request reach the disk). */
const FILES = [
  'index.html',
  'login.html',
  'style.css',
  'login.js',
  'app.js',
  'api.js',
  'dom.js',
  'charts.js',
  'tables.js',
  'cursor-pages.js',
  'dead-letters.js',
  'job.js',
  'job-actions.js',
  'job-flow.js',
  'job-sections.js',
  'job-reports.js',
  'jobs.js',
  'schedule-jobs.js',
  'table-labels.js',
  'schedules.js',
  'rate-limits.js',
];
const OPEN = new Set(['login.html', 'style.css', 'login.js']);

function load(name: string): Reply {
  const type = TYPES[name.slice(name.lastIndexOf('.') + 1)] ?? 'application/octet-stream';
  return { type, body: readFileSync(new URL(name, PAGE_DIR)) };
}

export function pageRoutes(policy: AccessPolicy): Route[] {
  const files = new Map(FILES.map((name) => [name, load(name)]));
  const file = (name: string) => files.get(name) as Reply;
  const login = (): Reply => ({ ...file('login.html'), status: 401 });
  return [
    { method: 'GET', path: '/', unauthorized: login, handle: () => file('index.html') },
    ...FILES.filter((name) => name !== 'index.html').map(
      (name): Route => ({
        method: 'GET',
        path: `/${name}`,
        open: OPEN.has(name),
        handle: () => file(name),
      }),
    ),
    {
      method: 'POST',
      path: '/login',
      open: true,
      handle: ({ body }) => {
        const token = (body as { token?: unknown } | null)?.token;
        if (!policy.needsToken) return { status: 204, body: '' };
        if (typeof token !== 'string' || !policy.tokenMatches(token)) {
          return problem(401, 'wrong token');
        }
        return { status: 204, body: '', headers: { 'set-cookie': policy.sessionCookie() } };
      },
    },
  ];
}
