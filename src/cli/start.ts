// skyq start: run the actors until SIGINT/SIGTERM. The first signal drains
// (stop claiming, finish or hand back in-flight work); a second exits now.
import type { Command } from 'commander';
import { errors } from '../base/errors.js';
import { parseKeepDead, parseKeepDone } from '../queue/history/retention.js';
import { checkRateLimit, describeRateLimit, parseRateLimit } from '../queue/ratelimit/spec.js';
import { describeTarget, ensureReachable } from '../redis/connection.js';
import { checkLogLevel } from '../runtime/log-names.js';
import { DEFAULT_ACTOR_NICE } from '../runtime/thread-priority.js';
import type { StartOptions } from '../start.js';
import { type ConnectionFlags, noRedisNamed, queueOptions, withConnectionFlags } from './common.js';
import {
  ALLOW_EVICTION_HELP,
  type HttpFlags,
  httpOptions,
  PUBLIC_URL_HELP,
  TOKEN_HELP,
} from './dashboard.js';
import { parseCount, parseDuration, parseGroupList, parsePositiveCount } from './duration.js';
import { embeddedRedis } from './embedded.js';
import {
  INTAKE_HELP,
  intakeGroupsLine,
  parseIntakeFlag,
  parseZsetIntakeFlag,
  ZSET_INTAKE_HELP,
} from './intake-flag.js';

interface StartFlags extends ConnectionFlags, HttpFlags {
  only?: string;
  concurrency: string;
  batch: string;
  lease: string;
  timeout: string;
  handler?: string;
  pool: string;
  logDir: string;
  logLevel: string;
  grace: string;
  allowEviction?: boolean;
  intake?: string;
  zsetIntake?: string;
  keepDone?: string;
  rateLimit: string[];
  actorNice: string;
  events?: boolean;
  keepDead?: string;
}

const collect = (value: string, earlier: string[]) => [...earlier, value];

export function registerStart(program: Command): void {
  withConnectionFlags(program.command('start'))
    .description('run one actor per group (and a coordinator) until stopped')
    .option('--only <groups>', 'run only these groups, e.g. 0,3,7')
    .option('--concurrency <n>', 'messages an actor holds at once (running or leased ahead)', '100')
    .option('--batch <n>', 'most messages leased per poll', '200')
    .option('--lease <duration>', 'lease length, renewed while a handler runs', '30s')
    .option('--timeout <duration>', 'fail a handler that runs longer (0 = no limit)', '10m')
    .option('--handler <module>', 'module whose default export is async (job) => {}')
    .option('--pool <n>', 'run the handler on a shared piscina pool of n threads', '0')
    .option('--log-dir <dir>', 'where actor-<g>.log files go', 'logs')
    .option('--log-level <level>', 'trace, debug, info, warn or error', 'info')
    .option('--grace <duration>', 'how long shutdown waits for running handlers', '10s')
    .option('--intake <lists>', INTAKE_HELP)
    .option('--zset-intake <KEY:UNIT,…>', ZSET_INTAKE_HELP)
    .option(
      '--keep-done <count,age>',
      'finished jobs kept per group with their results, e.g. 1000,1h (default); off keeps none',
    )
    .option(
      '--keep-dead <count,age>',
      'dead letters kept per group, e.g. 10000,24h or ,7d (default: all, until purged)',
    )
    .option(
      '--rate-limit <rate>',
      'at most this many starts, shared by every launcher: 100/s, 50/100ms, 6000/min; NAME=10/s for one job name (repeatable)',
      collect,
      [],
    )
    .option(
      '--actor-nice <n>',
      "nice steps the actor threads and Node's helper threads go below the launcher's, so a producer keeps the cores (Linux; 0 where other busy processes share them)",
      String(DEFAULT_ACTOR_NICE),
    )
    .option(
      '--events',
      'publish every event for skyq events / queue.events() (done, dead and cancelled always)',
    )
    .option('--http [addr]', 'serve /metrics, /healthz and the dashboard (default 127.0.0.1:9464)')
    .option('--auth-token <token>', TOKEN_HELP)
    .option('--public-url <url>', PUBLIC_URL_HELP)
    .option('--allow-eviction', ALLOW_EVICTION_HELP)
    .action(async (flags: StartFlags) => {
      // Loaded when the command runs, not when it registers (main.ts).
      const { checkStartOptions, startActors } = await import('../start.js');
      // Every flag is checked before any server starts or anything is printed.
      const options = startOptionsOf(flags);
      checkStartOptions(options);
      // A signal while starting is kept for when the launcher runs (then it drains and stops
      // the embedded server): Node's default would exit at once and leave that server running.
      // A second one exits now (the exit hook stops a server this process started).
      let early: string | null = null;
      const whileStarting = (signal: string) => {
        if (early !== null) process.exit(130);
        early = signal;
        console.log(`skyq: ${signal} while starting: stopping once started (another exits now)`);
      };
      const onInt = () => whileStarting('SIGINT');
      const onTerm = () => whileStarting('SIGTERM');
      process.on('SIGINT', onInt);
      process.on('SIGTERM', onTerm);
      const embedded = noRedisNamed(flags)
        ? await embeddedRedis((line) => console.log(line))
        : null;
      if (embedded) options.redis = embedded.url;
      // Actors reconnect forever, quietly: an address that never answers must fail here, at once.
      const launcher = await ensureReachable(options)
        .then(() => startActors(options))
        .catch(async (error) => {
          await embedded?.stop();
          throw error;
        });
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      // Ctrl-C drains from the moment the launcher runs: a caller that signals as soon as it
      // reads the ready line below must not meet Node's default, which kills without draining.
      let signals = 0;
      const shutdown = async (signal: string) => {
        signals++;
        if (signals > 1) {
          console.log(`skyq: second ${signal}, exiting now`);
          process.exit(130);
        }
        console.log(`skyq: ${signal}: draining (another signal exits at once)`);
        await launcher.stop();
        // Said, since the server's data then sits unused in its folder until the next start.
        const also =
          (await embedded?.stop()) === true
            ? `, and the embedded redis-server it ran (its data stays in ${embedded?.dir})`
            : '';
        console.log(`skyq: stopped${also}`);
        process.exit(0);
      };
      process.on('SIGINT', () => void shutdown('SIGINT'));
      process.on('SIGTERM', () => void shutdown('SIGTERM'));
      if (early !== null) return void shutdown(early);
      const where = describeTarget(options);
      console.log(
        `skyq: ${launcher.groups.length} ${launcher.groups.length === 1 ? 'actor' : 'actors'} ready on ${where} (groups ${launcher.groups.join(',')}); logs in ${options.logDir}/`,
      );
      for (const spec of launcher.intake) {
        console.log(
          `skyq: intake from list ${spec.list} into group ${spec.group} (priority ${spec.priority})`,
        );
      }
      const spread = intakeGroupsLine(launcher.intake);
      if (spread) console.log(spread);
      for (const { key, scoreUnit, group } of launcher.zsetIntake) {
        console.log(
          `skyq: intake from sorted set ${key} (scores in ${scoreUnit}) into group ${group}`,
        );
      }
      const limits = checkRateLimit(options.rateLimit);
      if (limits) {
        const shared = `shared by every launcher of ${options.prefix ?? 'task_group'}`;
        console.log(`skyq: rate limit ${describeRateLimit(limits)}, ${shared}`);
      }
      if (launcher.http)
        console.log(`skyq: dashboard, /metrics and /healthz on ${launcher.http.url}`);
    });
}

/** The options the flags describe, each flag checked (the Redis named, or the default). */
function startOptionsOf(flags: StartFlags): StartOptions {
  const logLevel = checkLogLevel(flags.logLevel, 'log-level');
  if (flags.publicUrl !== undefined && flags.http === undefined)
    throw errors.invalidOption('public-url', 'is for the HTTP server: give --http too');
  const rateLimit = flags.rateLimit.length > 0 ? parseRateLimit(flags.rateLimit) : undefined;
  const actorNice = parseCount(flags.actorNice, 'actor-nice');
  if (actorNice > 19)
    throw errors.invalidOption('actor-nice', 'must be between 0 and 19', actorNice);
  const queue = queueOptions(flags, 'long-running');
  return {
    ...queue,
    concurrency: parsePositiveCount(flags.concurrency, 'concurrency'),
    batch: parsePositiveCount(flags.batch, 'batch'),
    actorNice,
    leaseMs: parseDuration(flags.lease, 'lease'),
    timeoutMs: parseDuration(flags.timeout, 'timeout'),
    pool: parseCount(flags.pool, 'pool'),
    logDir: flags.logDir,
    logLevel,
    graceMs: parseDuration(flags.grace, 'grace'),
    allowEviction: flags.allowEviction === true,
    ...(flags.handler ? { handler: flags.handler } : {}),
    ...(flags.only !== undefined ? { only: parseGroupList(flags.only) } : {}),
    ...(flags.http !== undefined ? { http: httpOptions(flags) } : {}),
    ...(flags.intake !== undefined
      ? { intake: parseIntakeFlag(flags.intake, queue.groups ?? 10) }
      : {}),
    ...(flags.zsetIntake !== undefined
      ? { zsetIntake: parseZsetIntakeFlag(flags.zsetIntake) }
      : {}),
    ...(flags.keepDone !== undefined ? { keepDone: keepDoneFlag(flags.keepDone) } : {}),
    ...(rateLimit ? { rateLimit } : {}),
    ...(flags.events ? { events: true } : {}),
    ...(flags.keepDead !== undefined ? { keepDead: keepDeadFlag(flags.keepDead) } : {}),
  };
}

/** --keep-dead 10000,24h: false when it keeps them all (until purged). */
function keepDeadFlag(text: string): { count: number; ageMs: number } | false {
  return parseKeepDead(text, (age) => parseDuration(age, 'keep-dead')) ?? false;
}

/** --keep-done 1000,1h: false when it keeps nothing. */
function keepDoneFlag(text: string): { count: number; ageMs: number } | false {
  return parseKeepDone(text, (age) => parseDuration(age, 'keep-done')) ?? false;
}
