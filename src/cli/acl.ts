// skyq acl: prints the Redis ACL rule a skyq user needs for a prefix, the same
// rule a NOPERM error names (src/redis/acl.ts), ready to paste into redis-cli.
import type { Command } from 'commander';
import { aclRule, aclSetUser } from '../redis/acl.js';

export function registerAcl(program: Command): void {
  program
    .command('acl')
    .description('print the Redis ACL rule a skyq user needs (commands, keys, channels)')
    .option('--prefix <prefix>', 'key prefix of the groups', 'task_group')
    .option('--user <name>', 'ACL user name', 'skyq')
    .option('--rule', 'print the rule only (for an ACL file: user <name> on >password <rule>)')
    .action((flags: { prefix: string; user: string; rule?: boolean }) => {
      console.log(flags.rule ? aclRule(flags.prefix) : aclSetUser(flags.prefix, flags.user));
    });
}
