// skyq acl: prints the Redis ACL rule a skyq user needs for a prefix, the same
// rule a NOPERM error names (src/redis/acl.ts), ready to paste into redis-cli.
import type { Command } from 'commander';
import { errors } from '../base/errors.js';
import { aclRule, aclSetUser } from '../redis/acl.js';

/**
 * A user name the printed command can carry as one word: redis-cli splits `ACL SETUSER` at
 * spaces and reads quotes, so 'bad user' would set up a user "bad" with a rule "user".
 */
const USER_NAME = /^[A-Za-z0-9._@:-]+$/;

export function registerAcl(program: Command): void {
  program
    .command('acl')
    .description('print the Redis ACL rule a skyq user needs (commands, keys, channels)')
    .option('--prefix <prefix>', 'key prefix of the groups', 'task_group')
    .option('--user <name>', 'ACL user name', 'skyq')
    .option('--rule', 'print the rule only (for an ACL file: user <name> on >password <rule>)')
    .action((flags: { prefix: string; user: string; rule?: boolean }) => {
      if (!USER_NAME.test(flags.user))
        throw errors.invalidOption(
          'user',
          'expected letters, digits and . _ @ : - only (no spaces or quotes)',
          flags.user,
        );
      console.log(flags.rule ? aclRule(flags.prefix) : aclSetUser(flags.prefix, flags.user));
    });
}
