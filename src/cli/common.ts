// Flags every command shares: where Redis is (URL, cluster or Sentinel, TLS
// files) and how the queue is laid out. Passwords come from the URL or from the
// environment, never from a flag of their own.
import type { Command } from 'commander';
import { errors } from '../base/errors.js';
import { redactUrl } from '../base/redact.js';
import { type QueueOptions, type ScoreUnit, UNIT_MS } from '../queue/config.js';
import {
  checkRedisUrl,
  describeTarget,
  parseClusterNodes,
  type SentinelOptions,
} from '../redis/connection.js';
import { parseCount } from './duration.js';
import { defaultEmbeddedUrl } from './embedded.js';
import { embeddedPort } from './embedded-dir.js';
import { type TlsFlags, tlsFromFlags } from './tls-flags.js';

export interface ConnectionFlags extends TlsFlags {
  redis?: string;
  cluster?: string;
  sentinel?: string;
  sentinelMaster?: string;
  prefix?: string;
  groups?: string;
  scoreUnit?: string;
}

/** The port of the embedded server, for help texts (which must print even when it is malformed). */
function portForHelp(): string {
  try {
    return String(embeddedPort());
  } catch {
    return '$SKYQ_EMBEDDED_PORT';
  }
}

export function withConnectionFlags(command: Command): Command {
  return command
    .option(
      '--redis <url>',
      `Redis URL (default: $REDIS_URL, else the server skyq start runs, else redis://127.0.0.1:${portForHelp()})`,
    )
    .option('--cluster <nodes>', 'Redis Cluster seed nodes, host:port,host:port')
    .option(
      '--sentinel <nodes>',
      'Redis Sentinel nodes, host:port,host:port (login: $SKYQ_SENTINEL_PASSWORD, $SKYQ_SENTINEL_USERNAME)',
    )
    .option(
      '--sentinel-master <name>',
      "with --sentinel: the master group's name (its login: $SKYQ_REDIS_PASSWORD, $SKYQ_REDIS_USERNAME)",
    )
    .option('--tls-ca <file>', 'TLS: CA certificate (PEM) that signed the server (or $SKYQ_TLS_CA)')
    .option('--tls-cert <file>', 'TLS: client certificate (PEM), for mTLS (or $SKYQ_TLS_CERT)')
    .option('--tls-key <file>', 'TLS: client private key (PEM), for mTLS (or $SKYQ_TLS_KEY)')
    .option('--prefix <prefix>', 'key prefix of the groups', 'task_group')
    .option('--groups <n>', 'number of groups', '10')
    .option('--score-unit <unit>', 'unit of delayed-set scores: ms, cs or s', 'ms');
}

/** True when the user named no Redis at all (flag or REDIS_URL). */
export function noRedisNamed(flags: ConnectionFlags): boolean {
  return !flags.redis && !flags.cluster && !flags.sentinel && !process.env.REDIS_URL;
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
  if (flags.sentinelMaster !== undefined && !flags.sentinel)
    throw errors.invalidOption('sentinel-master', 'needs --sentinel host:port[,host:port…]');
  if (flags.sentinel) options.sentinel = sentinelFromFlags(flags);
  else if (flags.cluster) options.cluster = parseClusterNodes(flags.cluster);
  else {
    // An empty REDIS_URL names nothing, as for noRedisNamed().
    options.redis = checkRedisUrl(flags.redis ?? (process.env.REDIS_URL || defaultEmbeddedUrl()));
  }
  const tls = tlsFromFlags(flags);
  if (tls) options.tls = tls;
  if (mode === 'one-shot') options.failFast = true;
  return options;
}

/** --sentinel and --sentinel-master, with the logins from the environment. */
function sentinelFromFlags(flags: ConnectionFlags): SentinelOptions {
  if (flags.cluster || flags.redis)
    throw errors.invalidOption(
      'sentinel',
      `give --sentinel or --${flags.cluster ? 'cluster' : 'redis'}, not both`,
    );
  if (!flags.sentinelMaster)
    throw errors.invalidOption(
      'sentinel-master',
      'is needed with --sentinel: the master group to use',
    );
  const sentinel: SentinelOptions = {
    nodes: parseClusterNodes(flags.sentinel as string, 'sentinel'),
    master: flags.sentinelMaster,
  };
  const env = (name: string) => process.env[name] || undefined;
  const logins = {
    username: env('SKYQ_REDIS_USERNAME'),
    password: env('SKYQ_REDIS_PASSWORD'),
    sentinelUsername: env('SKYQ_SENTINEL_USERNAME'),
    sentinelPassword: env('SKYQ_SENTINEL_PASSWORD'),
  };
  for (const [field, value] of Object.entries(logins)) {
    if (value !== undefined) sentinel[field as keyof typeof logins] = value;
  }
  return sentinel;
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

/**
 * The first line a write command prints: which Redis it wrote to (password masked), as reads
 * say what they read, so a write that went to another server than the one meant shows at once.
 */
export function writeToLine(flags: ConnectionFlags): string {
  return `writing to ${describeTarget(queueOptions(flags))}`;
}

/** A word a POSIX shell reads back as it is: quoted when it holds anything else (`*`, spaces). */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The flags a printed command (a `more:` hint) needs to read the same queue on the same Redis:
 * where Redis is (--redis, --cluster, --sentinel, --sentinel-master, TLS files) and the layout
 * (--prefix, --groups, --score-unit when not the defaults), as given, each a shell word. A
 * password in --redis is masked as *** (the user puts it back); what came from the environment
 * (REDIS_URL, SKYQ_TLS_*, logins) is left out, as the copy reads the same environment.
 */
export function againFlags(flags: ConnectionFlags): string[] {
  const given: [string, string | undefined][] = [
    ['--redis', flags.redis === undefined ? undefined : redactUrl(flags.redis)],
    ['--cluster', flags.cluster],
    ['--sentinel', flags.sentinel],
    ['--sentinel-master', flags.sentinelMaster],
    ['--tls-ca', flags.tlsCa],
    ['--tls-cert', flags.tlsCert],
    ['--tls-key', flags.tlsKey],
    ['--prefix', flags.prefix === 'task_group' ? undefined : flags.prefix],
    ['--groups', flags.groups === '10' ? undefined : flags.groups],
    ['--score-unit', flags.scoreUnit === 'ms' ? undefined : flags.scoreUnit],
  ];
  return given.flatMap(([flag, value]) => (value === undefined ? [] : [flag, shellWord(value)]));
}
