// Flags every command shares: where Redis is (URL or cluster, TLS files) and
// how the queue is laid out.
import type { Command } from 'commander';
import { errors } from '../base/errors.js';
import { type QueueOptions, type ScoreUnit, UNIT_MS } from '../queue/config.js';
import { checkRedisUrl, describeTarget, parseClusterNodes } from '../redis/connection.js';
import { parseCount } from './duration.js';
import { defaultEmbeddedUrl } from './embedded.js';
import { type TlsFlags, tlsFromFlags } from './tls-flags.js';

export interface ConnectionFlags extends TlsFlags {
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
    .option('--tls-ca <file>', 'TLS: CA certificate (PEM) that signed the server (or $SKYQ_TLS_CA)')
    .option('--tls-cert <file>', 'TLS: client certificate (PEM), for mTLS (or $SKYQ_TLS_CERT)')
    .option('--tls-key <file>', 'TLS: client private key (PEM), for mTLS (or $SKYQ_TLS_KEY)')
    .option('--prefix <prefix>', 'key prefix of the groups', 'task_group')
    .option('--groups <n>', 'number of groups', '10')
    .option('--score-unit <unit>', 'unit of delayed-set scores: ms, cs or s', 'ms');
}

/** True when the user named no Redis at all (flag or REDIS_URL). */
export function noRedisNamed(flags: ConnectionFlags): boolean {
  return !flags.redis && !flags.cluster && !process.env.REDIS_URL;
}

/**
 * The queue options the flags describe. One-shot commands fail fast when Redis
 * cannot be reached; `long-running` ones (start) keep reconnecting. With no Redis
 * named, commands use the embedded server's saved password (./.skyq/).
 */
export function queueOptions(
  flags: ConnectionFlags,
  mode: 'one-shot' | 'long-running' = 'one-shot',
): QueueOptions {
  const scoreUnit = flags.scoreUnit ?? 'ms';
  if (!Object.hasOwn(UNIT_MS, scoreUnit))
    throw errors.invalidOption('score-unit', 'expected ms, cs or s', scoreUnit);
  const options: QueueOptions = {
    prefix: flags.prefix ?? 'task_group',
    groups: parseCount(flags.groups ?? '10', 'groups'),
    scoreUnit: scoreUnit as ScoreUnit,
  };
  if (flags.cluster) options.cluster = parseClusterNodes(flags.cluster);
  else {
    // An empty REDIS_URL names nothing, as for noRedisNamed().
    options.redis = checkRedisUrl(flags.redis ?? (process.env.REDIS_URL || defaultEmbeddedUrl()));
  }
  const tls = tlsFromFlags(flags);
  if (tls) options.tls = tls;
  if (mode === 'one-shot') options.failFast = true;
  return options;
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * The first line a read command prints: which Redis it read (password masked), so a shared
 * server answering on 6379 in place of the one meant never passes for it.
 */
export function readFromLine(flags: ConnectionFlags): string {
  return `reading ${describeTarget(queueOptions(flags))}`;
}
