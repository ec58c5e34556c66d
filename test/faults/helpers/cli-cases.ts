/**
 * Generated command lines for `skyq produce|get|reschedule|cancel|dlq|stats`: random flags with
 * values that are valid, invalid, or valid only sometimes, unknown flags, missing and extra
 * arguments. Each case knows what it deserves:
 * - bad: exit 1, and the first line names one of the culprits (`names`);
 * - ok: exit 0 when the command must succeed on valid input (`mustSucceed`);
 * - maybe: either exit, but never a stack trace, and a failure is one clear line.
 */
import { ASCII, type Rng, UNICODE } from './fuzz.js';

export type Verdict = 'ok' | 'bad' | 'maybe';

interface Part {
  args: string[];
  verdict: Verdict;
  /** what a refusal must name (one of them) */
  names: string[];
}

export interface CliCase {
  args: string[];
  verdict: Verdict;
  names: string[];
  mustSucceed: boolean;
}

interface Context {
  groups: number;
  /** --count was given: --spread, --body-bytes and --at-once are taken only then */
  counting: boolean;
}

type FlagGen = (rng: Rng, ctx: Context) => Part;

/** --name value, valid when drawn from `ok`, refused naming `names` when drawn from `bad`. */
const choice =
  (name: string, ok: string[], bad: string[], names = [name], maybe: string[] = []): FlagGen =>
  (rng) => {
    const pool = rng.pick([ok, ok, bad, ...(maybe.length ? [maybe] : [])].filter((p) => p.length));
    const verdict: Verdict = pool === ok ? 'ok' : pool === bad ? 'bad' : 'maybe';
    return { args: [`--${name}`, rng.pick(pool)], verdict, names };
  };

const flag =
  (name: string): FlagGen =>
  () => ({ args: [`--${name}`], verdict: 'ok', names: [] });

const DURATION_OK = ['0', '5s', '250ms', '1.5s', '2m', '1h'];
const DURATION_BAD = ['5', '-1s', '5 s', 'abc', '', '1e3s', '10d', '9999999999h'];
const COUNT_BAD = ['-1', 'x', '1.5', ''];

/** Text that commander will not take for a flag, and that has no NUL (argv cannot carry one). */
const text = (rng: Rng, max = 40) => {
  const out = rng.text(rng.int(1, max), rng.pick([ASCII, UNICODE, `${ASCII}\t\r\n\x01\x1b\x7f`]));
  return out.startsWith('-') ? `x${out}` : out;
};

const group: FlagGen = (rng, ctx) => {
  if (rng.chance(0.6))
    return { args: ['--group', String(rng.int(0, ctx.groups - 1))], verdict: 'ok', names: [] };
  const value = rng.pick([String(ctx.groups), String(ctx.groups + 5), '-1', 'x', '1.5']);
  return { args: ['--group', value], verdict: 'bad', names: ['group'] };
};

/** Matters only with --count: otherwise the value is never read. */
const withCount =
  (gen: FlagGen): FlagGen =>
  (rng, ctx) => {
    const part = gen(rng, ctx);
    // Without --count they are refused, whatever their value, naming the flag.
    return ctx.counting ? part : { ...part, verdict: 'bad' };
  };

const DELAY = choice('delay', DURATION_OK, DURATION_BAD);
const AT = choice(
  'at',
  ['2031-01-31T09:00:00Z', '2030-06-01T10:00', String(Date.now() + 3_600_000)],
  ['tomorrow', '2030-13-45', '', '99999999999999999', '1.5', 'now'],
);

interface CommandSpec {
  words: string[];
  ids: number;
  flags: Record<string, FlagGen>;
  mustSucceed: boolean;
}

const COMMANDS: CommandSpec[] = [
  {
    words: ['produce'],
    ids: 0,
    mustSucceed: true,
    flags: {
      delay: DELAY,
      priority: choice(
        'priority',
        ['0', '5', '1000000'],
        ['-1', 'x', '2.5'],
        ['priority'],
        ['1000001'],
      ),
      key: (rng) => ({ args: ['--key', text(rng)], verdict: 'ok', names: [] }),
      json: flag('json'),
      'max-line': choice('max-line', ['0', '10', '1024', '100000'], COUNT_BAD),
      // Paced, a --count run lasts its spread (here up to an hour): these add at once. The
      // paced path has its own test (cli-produce-input).
      count: (rng, ctx) => {
        const part = choice('count', ['0', '1', '5', '30'], COUNT_BAD)(rng, ctx);
        return { ...part, args: [...part.args, '--at-once'] };
      },
      'at-once': withCount(flag('at-once')),
      spread: withCount(choice('spread', DURATION_OK, [...DURATION_BAD, '25h'])),
      'body-bytes': withCount(
        choice('body-bytes', ['0', '1', '100'], COUNT_BAD, ['body-bytes'], ['2000000']),
      ),
      quiet: flag('quiet'),
    },
  },
  { words: ['get'], ids: 1, mustSucceed: false, flags: { group, json: flag('json') } },
  { words: ['reschedule'], ids: 1, mustSucceed: false, flags: { delay: DELAY, at: AT, group } },
  { words: ['cancel'], ids: 1, mustSucceed: false, flags: {} },
  {
    words: ['dlq', 'list'],
    ids: 0,
    mustSucceed: true,
    flags: {
      group,
      limit: choice('limit', ['1', '50', '100000'], ['0', '100001', ...COUNT_BAD]),
      json: flag('json'),
    },
  },
  ...(['retry', 'purge'] as const).map((verb) => ({
    // purge with no selection asks first, and refuses where nobody can answer: --yes.
    words: verb === 'purge' ? ['dlq', verb, '--yes'] : ['dlq', verb],
    ids: 0,
    mustSucceed: true,
    flags: {
      group,
      // Random ids are no dead letters: the command names them and exits 1.
      ids: (rng: Rng) => ({
        args: ['--ids', `${text(rng, 10)},${text(rng, 10)}`],
        verdict: 'maybe' as const,
        names: [],
      }),
    },
  })),
  {
    words: ['stats'],
    ids: 0,
    mustSucceed: true,
    flags: { json: flag('json'), watch: choice('watch', [], ['50ms', '5', 'abc', '2h']) },
  },
];

/** Flags every command takes; --redis only ever names nothing reachable (never a shared server). */
const COMMON: [number, FlagGen][] = [
  [0.3, choice('prefix', ['jobs', 'a:b', 'ünï', 'x.y-z'], ['', 'a b', '{x}', 'x}'])],
  [
    0.2,
    choice('score-unit', ['ms', 'cs', 's'], ['h', 'MS', '', ' ms', 'toString'], ['score-unit']),
  ],
  [
    0.08,
    choice(
      'redis',
      [],
      [
        'http://127.0.0.1:1',
        'redis://127.0.0.1:1',
        'not a url',
        'redis://:hunter2@127.0.0.1:1',
        'rediss://127.0.0.1:1',
        'redis://127.0.0.1:99999',
      ],
      ['redis', 'Redis'],
    ),
  ],
  [0.05, choice('tls-ca', [], ['/nonexistent/ca.pem'], ['tls-ca'])],
];

const UNKNOWN = ['--frobnicate', '--delay-ms=5', '-z', '--groups-count', '--no-such-flag'];

export function cliCase(rng: Rng): CliCase {
  const spec = rng.pick(COMMANDS);
  const parts: Part[] = [];
  let groups = 10;
  if (rng.chance(0.3)) {
    const value = rng.pick(['1', '4', '10', '1024', '0', '1025', '-1', 'x', '2.5']);
    const valid = ['1', '4', '10', '1024'].includes(value);
    if (valid) groups = Number(value);
    parts.push({ args: ['--groups', value], verdict: valid ? 'ok' : 'bad', names: ['groups'] });
  }
  const names = Object.keys(spec.flags).filter(() => rng.chance(0.4));
  const ctx: Context = { groups, counting: names.includes('count') };
  for (const name of names) parts.push((spec.flags[name] as FlagGen)(rng, ctx));
  if (spec.words[0] === 'reschedule' && names.includes('delay') === names.includes('at'))
    parts.push({ args: [], verdict: 'bad', names: ['delay', 'at'] });
  for (const [p, gen] of COMMON) if (rng.chance(p)) parts.push(gen(rng, ctx));
  if (rng.chance(0.1)) {
    const unknown = rng.pick(UNKNOWN);
    parts.push({ args: [unknown], verdict: 'bad', names: [unknown.split('=')[0] as string] });
  }
  const ids = rng.chance(0.9)
    ? spec.ids
    : rng.pick([spec.ids - 1, spec.ids + 1].filter((n) => n >= 0));
  if (ids !== spec.ids) parts.push({ args: [], verdict: 'bad', names: ['argument'] });
  // An id is any text: whether it names a message decides the exit code.
  for (let i = 0; i < ids; i++) parts.push({ args: [text(rng, 60)], verdict: 'maybe', names: [] });
  const order = parts
    .map((p) => ({ p, k: rng.next() }))
    .sort((a, b) => a.k - b.k)
    .map(({ p }) => p);
  const bad = parts.filter((p) => p.verdict === 'bad');
  const verdict: Verdict =
    bad.length > 0 ? 'bad' : parts.some((p) => p.verdict === 'maybe') ? 'maybe' : 'ok';
  return {
    args: [...spec.words, ...order.flatMap((p) => p.args)],
    verdict,
    names: bad.flatMap((p) => p.names),
    mustSucceed: spec.mustSucceed,
  };
}
