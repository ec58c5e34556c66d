// skyq env: the Redis every command and `new Queue()` use when none is named, as a shell line
// to evaluate (`eval "$(npx skyq env)"`), so that any program started from that shell reaches
// the embedded server `npm start` runs, from any folder. The one command that prints a
// password: the URL is of no use without it.
import type { Command } from 'commander';
import { ensureReachable } from '../redis/connection.js';
import { queueOptions } from './common.js';

export function registerEnv(program: Command): void {
  program
    .command('env')
    .description(
      'print export REDIS_URL=… (password included) for the Redis used when none is named: eval "$(npx skyq env)"',
    )
    .action(async () => {
      const options = queueOptions({});
      // Nothing answering is one line, as for every command (main.ts says where it looked).
      await ensureReachable(options);
      // Single quotes keep the shell from reading anything in it; a quote inside is closed around.
      const quoted = `'${String(options.redis).replace(/'/g, `'\\''`)}'`;
      process.stdout.write(`export REDIS_URL=${quoted}\n`);
    });
}
