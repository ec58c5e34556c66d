// The least a Redis ACL user needs to run skyq with a given prefix: the only
// place that knows it. docs/OPERATIONS.md shows it, a NOPERM error names it,
// and test/redis-acl.test.ts runs skyq as a user that has nothing more.
// When skyq starts sending a new command (from TypeScript or from a Lua script:
// Redis checks the commands a script calls against the caller's ACL too), add it
// here; the test that scans the Lua sources names any one that is missing.

/** Commands skyq sends itself (not from Lua), and why. */
export const CLIENT_COMMANDS = [
  'ping', // health checks
  'client|setname', // names connections for CLIENT LIST
  // (ioredis also sends CLIENT SETINFO, Redis 7.2+; it ignores a refusal, and naming
  // the subcommand would make ACL SETUSER fail on Redis 7.0)
  'select', // a /db in the URL
  'time', // Redis's clock
  'evalsha', // every state change is a script
  'eval', // the first run of a script on a server
  'script|load', // older skyq loaded every script at start: kept, so one may run beside this
  'incrby', // id blocks on {prefix:g}:seq
  'blpop', // an idle actor waits on {prefix:g}:wake
  'set', // live launcher figures: prefix:launcher:<id>; spilled bodies {prefix:g}:body:<nonce>
  'get',
  'mget', // spilled bodies, read after a claim
  'getrange', // the start of spilled bodies: dead-letter previews
  'del',
  'multi', // a spilled body and its line in {prefix:g}:spills go together
  'exec',
  'zadd', // the launcher index: prefix:launchers; {prefix:g}:spills
  'pexpire', // the launcher index outlives its last launcher by a minute at most
  'zrangebyscore',
  'zremrangebyscore',
  'zrem',
  'cluster|slots', // Redis Cluster: the slot map
  'cluster|info', // Redis Cluster: ready check
  'asking', // Redis Cluster: slot migration redirects
  'xread', // waitFor: reads {prefix:g}:fin
  'xrevrange', // waitFor, and the dataset check (dataset-tags.ts): where {prefix:g}:fin ends
  'xrange', // events({ follow: false }): {prefix:g}:fin read a chunk at a time
  'llen', // an intake's source lists (src/runtime/intake/)
  'lmove', // intake: source list → the launcher's holding list
  'blmove', // intake: the same, blocking while the list is empty
  'lrange', // intake: the holding list's oldest items
  'hdel', // intake: {prefix:intake}:holding entries of released holding lists
] as const;

/** Commands the Lua scripts call (src/lua/*.lua). */
export const SCRIPT_COMMANDS = [
  'del',
  'exists',
  'get',
  'hdel',
  'hexists',
  'hget',
  'hgetall', // schedule-list.lua: a group's schedules
  'hincrby',
  'hkeys', // lib-ids.lua forgetReports: the jobs that reported progress, when fewer than forgotten
  'hlen',
  'hmget',
  'hset',
  'hstrlen', // list.lua, dead-list.lua: a record's size, beside its preview (previews.lua)
  'incr',
  'incrby',
  'lindex',
  'llen',
  'lset',
  'rpush',
  'set',
  'time',
  'type',
  'zadd',
  'zcard',
  'zcount',
  'zmscore',
  'zrank',
  'zrange',
  'zrangebyscore',
  'zrem',
  'zscore',
  'xadd', // the fin stream: jobs that ended, for waitFor
  'ltrim', // intake-commit.lua
  'lpush', // intake-zmove.lua: a sorted set's due members into the holding list
  'lrange', // intake-zmove.lua: the holding list's oldest items
  'rename', // intake-adopt.lua
  'pexpire',
  'hscan', // intake-alive.lua
  'zremrangebyscore',
] as const;

/** Commands skyq can do without: it works on when they are refused. */
export const OPTIONAL_COMMANDS = [
  // The ready check (ready-check.ts): is Redis still loading its data, and is the server the
  // sentinels name a master. Refused: a PING on a connection of its own answers the first, and
  // the sentinels are trusted on the second. Also maxmemory_policy (eviction.ts: else CONFIG GET).
  'info',
  'config|get', // reads notify-keyspace-events; maxmemory-policy where INFO says nothing
  'subscribe', // keyspace notifications of foreign ZADDs; client tracking's __redis__:invalidate
  'client|id', // client tracking (src/runtime/tracking.ts): where its announcements go
  'client|tracking', // the watcher is told of writes to idle groups' keys
  'exists', // client tracking: the watcher's arming read of idle groups' keys
  'psubscribe',
  'unsubscribe',
  'punsubscribe',
] as const;

/** A prefix inside an ACL glob: its own glob characters taken literally. */
const literal = (text: string) => text.replace(/[*?[\]\\]/g, '\\$&');

/** The key patterns: `<prefix>:*` (delayed sets, launcher figures) and `{<prefix>:*` (the rest). */
export function aclKeyPatterns(prefix: string): string[] {
  return [`~${literal(prefix)}:*`, `~{${literal(prefix)}:*`];
}

/**
 * The Pub/Sub channels skyq may listen to: keyspace notifications of its keys, and client
 * tracking's announcements (in RESP2 they come on a channel of their own).
 */
export function aclChannelPatterns(prefix: string): string[] {
  return [`&__keyspace@*__:${literal(prefix)}:*`, '&__redis__:invalidate'];
}

/**
 * The ACL rule (what follows `ACL SETUSER <name> on ><password>`) for a skyq
 * user of `prefix`: its keys and channels, and only the commands skyq sends.
 */
export function aclRule(prefix = 'task_group'): string {
  const commands = [...new Set([...CLIENT_COMMANDS, ...SCRIPT_COMMANDS, ...OPTIONAL_COMMANDS])];
  return [
    'resetkeys',
    ...aclKeyPatterns(prefix),
    'resetchannels',
    ...aclChannelPatterns(prefix),
    '-@all',
    ...commands.map((command) => `+${command}`),
  ].join(' ');
}

/** The whole command to create such a user, for messages and docs. */
export function aclSetUser(prefix = 'task_group', user = 'skyq'): string {
  return `ACL SETUSER ${user} on >PASSWORD ${aclRule(prefix)}`;
}
