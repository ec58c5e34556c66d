// skyq dashboard: the web dashboard on its own, showing every launcher that publishes its
// figures to this Redis, and /metrics of them all (one scrape target for every launcher). Also the --http / --auth-token flags `skyq start` shares.
import type { Command } from 'commander';
import type { HttpOptions } from '../http/index.js';
import { PUBLIC_URL_ENV, TOKEN_ENV } from '../http/policy.js';
import { ensureReachable } from '../redis/connection.js';
import { type ConnectionFlags, queueOptions, readFromLine, withConnectionFlags } from './common.js';

export interface HttpFlags {
  http?: string | true;
  authToken?: string;
  publicUrl?: string;
}

export const TOKEN_HELP = `token the HTTP server asks for (default $${TOKEN_ENV}); required off loopback`;
export const PUBLIC_URL_HELP = `the URL people open, e.g. https://queue.example.com behind a TLS proxy: its origin and host are accepted (default $${PUBLIC_URL_ENV})`;
export const ALLOW_EVICTION_HELP =
  'run even where Redis maxmemory-policy is allkeys-* (it deletes messages when memory is full): a loud warning instead of a refusal';

/** The HttpOptions the flags ask for (a bare `--http` means the default address). */
export function httpOptions(flags: HttpFlags): HttpOptions {
  return {
    ...(typeof flags.http === 'string' ? { listen: flags.http } : {}),
    ...(flags.authToken ? { authToken: flags.authToken } : {}),
    ...(flags.publicUrl ? { publicUrl: flags.publicUrl } : {}),
  };
}

export function registerDashboard(program: Command): void {
  withConnectionFlags(program.command('dashboard'))
    .description(
      'web dashboard and /metrics of every launcher publishing to this Redis (depths, dead letters)',
    )
    .option('--http <addr>', 'where to listen, host:port', '127.0.0.1:9465')
    .option('--auth-token <token>', TOKEN_HELP)
    .option('--public-url <url>', PUBLIC_URL_HELP)
    .option('--allow-eviction', ALLOW_EVICTION_HELP)
    .action(async (flags: ConnectionFlags & HttpFlags & { allowEviction?: boolean }) => {
      // Loaded when the command runs, not when it registers (main.ts).
      const { checkHttpOptions, serveDashboard } = await import('../http/index.js');
      const options = queueOptions(flags, 'long-running');
      const http = { ...httpOptions(flags), allowEviction: flags.allowEviction === true };
      checkHttpOptions(http); // a bad --http, token or --public-url is said before connecting
      // Fails like every other command: "cannot reach Redis at <url>: connection refused".
      await ensureReachable(options);
      console.log(readFromLine(flags));
      const handle = await serveDashboard(options, http);
      console.log(`skyq: dashboard, /metrics and /healthz on ${handle.url} (Ctrl-C stops it)`);
      const stop = async () => {
        await handle.close();
        process.exit(0);
      };
      process.on('SIGINT', () => void stop());
      process.on('SIGTERM', () => void stop());
    });
}
