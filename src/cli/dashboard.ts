// skyq dashboard: the web dashboard on its own, showing every launcher that publishes its
// figures to this Redis. Also the --http / --auth-token flags `skyq start` shares.
import type { Command } from 'commander';
import { type HttpOptions, serveDashboard } from '../http/index.js';
import { TOKEN_ENV } from '../http/policy.js';
import { ensureReachable } from '../redis/connection.js';
import { type ConnectionFlags, queueOptions, withConnectionFlags } from './common.js';

export interface HttpFlags {
  http?: string | true;
  authToken?: string;
}

export const TOKEN_HELP = `token the HTTP server asks for (default $${TOKEN_ENV}); required off loopback`;

/** The HttpOptions the flags ask for (a bare `--http` means the default address). */
export function httpOptions(flags: HttpFlags): HttpOptions {
  return {
    ...(typeof flags.http === 'string' ? { listen: flags.http } : {}),
    ...(flags.authToken ? { authToken: flags.authToken } : {}),
  };
}

export function registerDashboard(program: Command): void {
  withConnectionFlags(program.command('dashboard'))
    .description('web dashboard of every launcher publishing to this Redis (depths, dead letters)')
    .option('--http <addr>', 'where to listen, host:port', '127.0.0.1:9465')
    .option('--auth-token <token>', TOKEN_HELP)
    .action(async (flags: ConnectionFlags & HttpFlags) => {
      const options = queueOptions(flags, 'long-running');
      // Fails like every other command: "cannot reach Redis at <url>: connection refused".
      await ensureReachable(options);
      const handle = await serveDashboard(options, httpOptions(flags));
      console.log(`skyq: dashboard on ${handle.url} (Ctrl-C stops it)`);
      const stop = async () => {
        await handle.close();
        process.exit(0);
      };
      process.on('SIGINT', () => void stop());
      process.on('SIGTERM', () => void stop());
    });
}
