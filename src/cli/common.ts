// Flags every command shares: where Redis is and how the queue is laid out.
import type { Command } from 'commander';
import type { QueueOptions, ScoreUnit } from '../config.js';
import { parseClusterNodes } from '../redis/connection.js';
import { parseCount } from './duration.js';

export interface ConnectionFlags {
  redis?: string;
  cluster?: string;
  prefix?: string;
  groups?: string;
  scoreUnit?: string;
}

export function withConnectionFlags(command: Command): Command {
  return command
    .option('--redis <url>', 'Redis URL (default: $REDIS_URL or redis://127.0.0.1:6379)')
    .option('--cluster <nodes>', 'Redis Cluster seed nodes, host:port,host:port')
    .option('--prefix <prefix>', 'key prefix of the groups', 'task_group')
    .option('--groups <n>', 'number of groups', '10')
    .option('--score-unit <unit>', 'unit of delayed-set scores: ms, cs or s', 'ms');
}

/** True when the user named no Redis at all (flag or REDIS_URL). */
export function noRedisNamed(flags: ConnectionFlags): boolean {
  return !flags.redis && !flags.cluster && !process.env.REDIS_URL;
}

export function queueOptions(flags: ConnectionFlags): QueueOptions {
  const options: QueueOptions = {
    prefix: flags.prefix ?? 'task_group',
    groups: parseCount(flags.groups ?? '10', 'groups'),
    scoreUnit: (flags.scoreUnit ?? 'ms') as ScoreUnit,
  };
  if (flags.cluster) options.cluster = parseClusterNodes(flags.cluster);
  else {
    const url = flags.redis ?? process.env.REDIS_URL;
    if (url) options.redis = url;
  }
  return options;
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
