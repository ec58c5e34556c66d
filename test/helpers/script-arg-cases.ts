/**
 * Malformed ARGV for each Lua script (test/guarantees-script-args.test.ts): per script a
 * well-formed call and the variants that break one thing each (missing, not a number,
 * negative, huge, too many).
 */

export type Args = string[];
/** One malformed call: what is wrong, and the arguments. */
type Case = [what: string, argv: Args];

export const set = (argv: Args, position: number, value: string): Args =>
  argv.map((arg, i) => (i === position - 1 ? value : arg));
const HUGE = '99999999999999999999999';

/** Cases every script gets: one argument short, one too many. */
const shortAndLong = (valid: Args): Case[] => [
  ['the last argument missing', valid.slice(0, -1)],
  ['an argument too many', [...valid, 'x']],
];

/**
 * Per script: a well-formed ARGV and the malformed variants. `$id`, `$tok` and `$prefix`
 * are replaced with a message id, its lease token and the prefix of the keys the call gets.
 */
export function casesOf(name: string): { valid: Args; bad: Case[] } {
  const lease = ['$tok', '1', '$id'];
  const claimHead = ['1', '10', '30000', '5000', '|0|3|e1000|', '0', '1048576', 'cid', ''];
  const table: Record<string, { valid: Args; bad: Case[] }> = {
    add: {
      valid: ['1', '', '1', '0', '0', '0', '', '0', 'args-new', '', '|0|3|f1000|sbody'],
      bad: [
        [
          'unit not 1, 10 or 1000',
          set(['1', '', '1', '0', '0', '0', '', '0', 'n', '', 'r'], 1, '7'),
        ],
        ['a count not a number', ['1', '', 'x', '0', '0', '0', '', '0', 'n', '', 'r']],
        ['a negative count', ['1', '', '-1', '0', '0', '0', '', '0', 'n', '', 'r']],
        [
          'a count larger than the messages sent',
          ['1', '', '2', '0', '0', '0', '', '0', 'n', '', 'r'],
        ],
        ['a huge count', ['1', '', HUGE, '0', '0', '0', '', '0', 'n', '', 'r']],
        [
          'spilled messages that are not there',
          ['1', '', '1', '0', '0', '1', '', '0', 'n', '', 'r'],
        ],
        ['an empty id', ['1', '', '1', '0', '0', '0', '', '0', '', '', 'r']],
        ['a score not a number', ['1', '', '1', '0', '0', '0', '', '0', 'n', 'soon', 'r']],
        [
          'a priority not a number',
          ['1', '', '1', '0', '0', '0', '', '0', 'n', '', 'r', 'n', 'high'],
        ],
        ['a priority without its id', ['1', '', '1', '0', '0', '0', '', '0', 'n', '', 'r', 'n']],
        ['the record missing', ['1', '', '1', '0', '0', '0', '', '0', 'n', '']],
        ['nothing at all', []],
        ['an events flag not 1 or empty', ['1', '', '1', '0', '0', '0', 'on', '0', 'n', '', 'r']],
        ['more dedupe windows than messages', ['1', '', '0', '1', '0', '0', '', '2', 'n', '', 'r']],
        ['a dedupe window of 0 ms', ['1', '', '0', '1', '0', '0', '', '1', 'n', '', 'r', 'n', '0']],
        ['a dedupe window missing', ['1', '', '0', '1', '0', '0', '', '1', 'n', '', 'r']],
      ],
    },
    claim: {
      valid: [
        '1',
        '10',
        '30000',
        '5000',
        '|0|3|e1000|',
        '0',
        '1048576',
        'cid',
        '',
        '0',
        '',
        '',
        '0',
      ],
      bad: [
        ['a limited name empty', [...claimHead, '1', '', '5', '', '', '0']],
        ['a grant not a number', [...claimHead, '1', 'mail', 'x', '', '', '0']],
        ['a negative grant', [...claimHead, '1', 'mail', '-1', '', '', '0']],
        ['two limited names, one sent', [...claimHead, '2', 'mail', '5', '', '', '0']],
      ],
    },
    ack: {
      valid: ['', '', '3', ...lease],
      bad: [
        ['nothing at all', []],
        ['a lease count not a number', ['', '', 'x', ...lease]],
        ['a lease count past the end', ['', '', '9', ...lease]],
        ['a token with no ids', ['', '', '3', '$tok', '0', '$id']],
        ['a token with more ids than sent', ['', '', '3', '$tok', '5', '$id']],
        ['an empty token', ['', '', '3', '', '1', '$id']],
        ['a malformed retention', ['ever', '', '3', ...lease]],
        ['an events flag not 1 or empty', ['', 'yes', '3', ...lease]],
        ['a result while nothing is kept', ['', '', '3', ...lease, '5|u']],
        ['no result while kept', ['10:1000', '', '3', ...lease]],
        ['more results than ids', ['10:1000', '', '3', ...lease, '5|u', '6|u']],
        ['no name with events on', ['', '1', '3', ...lease]],
        ['a flow section cut short', ['', '', '3', ...lease, '1', '1', 'f', '0:m:p']],
        ['a flow entry past the ids', ['', '', '3', ...lease, '1', '2', 'f', '0:m:p', '0|u']],
        ['a flow entry of no kind', ['', '', '3', ...lease, '1', '1', 'x', '0:m:p', '0|u']],
        ['a flow child without its ref', ['', '', '3', ...lease, '1', '1', 'f', '', '0|u']],
      ],
    },
    fail: {
      valid: ['1', '$tok', '$id', 'boom', 'retry', '', '60000', '', '', 'Error: boom'],
      bad: [
        [
          'a malformed dead-letter retention',
          ['1', '$tok', '$id', 'boom', 'retry', '', '60000', '', 'ever', ''],
        ],
        [
          'a stack over 8 KiB',
          ['1', '$tok', '$id', 'boom', 'retry', '', '60000', '', '', 's'.repeat(8193)],
        ],
      ],
    },
    report: {
      valid: ['', '3', ...lease, '50', '', '1', '1', 'a line'],
      bad: [
        ['nothing at all', []],
        ['an events flag not 1 or empty', ['on', '3', ...lease, '50', '', '1', '1', 'l']],
        ['a lease count not a number', ['', 'x', ...lease, '50', '', '1', '1', 'l']],
        ['a lease count past the end', ['', '99', ...lease, '50', '', '1', '1', 'l']],
        ['an empty token', ['', '3', '', '1', '$id', '50', '', '1', '1', 'l']],
        ['no report after the lease', ['', '3', ...lease]],
        ['a progress that is not JSON', ['', '3', ...lease, '{oops', '', '0', '0']],
        ['a progress over 4096 bytes', ['', '3', ...lease, '1'.repeat(4097), '', '0', '0']],
        ['a count of lines logged not a number', ['', '3', ...lease, '', '', 'x', '0']],
        ['more lines sent than logged', ['', '3', ...lease, '', '', '1', '2', 'a', 'b']],
        [
          'more than 100 lines sent',
          ['', '3', ...lease, '', '', '101', '101', ...Array.from({ length: 101 }, () => 'l')],
        ],
        ['a line over 1024 bytes', ['', '3', ...lease, '', '', '1', '1', 'l'.repeat(1025)]],
        ['a line missing', ['', '3', ...lease, '', '', '2', '2', 'l']],
      ],
    },
    extend: {
      valid: ['30000', ...lease],
      bad: [
        ['a negative lease', ['-5000', ...lease]],
        ['a lease not a number', ['soon', ...lease]],
        ['a huge lease', [HUGE, ...lease]],
        ['a count not a number', ['30000', '$tok', 'x', '$id']],
        ['a count past the end', ['30000', '$tok', '2', '$id']],
        ['an empty token', ['30000', '', '1', '$id']],
        ['no leases', ['30000']],
      ],
    },
    release: {
      valid: ['1', '', '', ...lease],
      bad: [
        ['unit not a number', ['ms', '', '', ...lease]],
        ['attempt flag not 1 or empty', ['1', 'yes', '', ...lease]],
        ['a count not a number', ['1', '', '', '$tok', 'x', '$id']],
        ['a count past the end', ['1', '', '', '$tok', '9', '$id']],
        ['no leases', ['1', '', '']],
      ],
    },
    cancel: {
      valid: ['$id', ''],
      bad: [
        ['nothing at all', []],
        ['a cascade without its parent', ['$id', '', 'cascade']],
        ['a parent without a cascade', ['$id', '', 'force', '0:p']],
        ['a parent not <group>:<id>', ['$id', '', 'cascade', 'p']],
      ],
    },
    reschedule: { valid: ['1', '$id', 'd1000', ''], bad: [] },
    inspect: { valid: ['1', '$id', '0'], bad: [] },
    counts: { valid: ['1'], bad: [['nothing at all', []]] },
    'dead-list': {
      valid: ['10', '1048576', '0', 'rank', '0'],
      bad: [
        ['an after-cursor with rank arguments', ['10', '1048576', '0', 'after', '0']],
        ['a cursor side not <, = or >', ['10', '1048576', '0', 'after', '5', '?', 'x']],
        ['a cursor time not a number', ['10', '1048576', '0', 'after', 'then', '=', 'x']],
      ],
    },
    'dead-retry': { valid: ['*', '10'], bad: [] },
    'dead-purge': { valid: ['*', '10'], bad: [] },
    pause: {
      valid: ['on'],
      bad: [
        ['nothing at all', []],
        ['neither on nor off', ['yes']],
      ],
    },
    time: { valid: [], bad: [['an argument', ['x']]] },
    'schedule-upsert': {
      valid: ['1', 'args-s', 'digest', '{"id":"args-s"}', '|0|3|f1000|', 's'].concat([
        '1',
        '',
        '0',
        '',
        '0',
        '',
        '0',
      ]),
      bad: [],
    },
    'schedule-advance': { valid: ['1', 'args-s', '1000', 'digest', '', '0'], bad: [] },
    'schedule-remove': {
      valid: ['args-s', ''],
      bad: [
        ['an empty id', ['', '']],
        ['a fence without its generation', ['args-s', '', 'fence']],
      ],
    },
    'schedule-home': {
      valid: ['read', 'args-s'],
      bad: [
        ['a claim without its group', ['claim', 'args-s']],
        ['a release of a marker without its generation', ['release', 'args-s', '3']],
      ],
    },
    'schedule-list': {
      valid: [''],
      bad: [
        ['nothing at all', []],
        ['a second argument not records', ['', 'bodies']],
      ],
    },
    'spill-drop': {
      valid: ['nonce'],
      bad: [
        ['nothing at all', []],
        ['an empty nonce', ['']],
      ],
    },
    'intake-dead': { valid: ['args-big', '|0|3|f1000|sx', 'too big', '10', ''], bad: [] },
    'id-block': { valid: ['1000'], bad: [['zero ids', ['0']]] },
    format: {
      valid: ['2', '1'],
      bad: [
        ['nothing at all', []],
        ['a raise flag other than 1 or empty', ['2', 'yes']],
      ],
    },
    'watch-many': {
      valid: ['1', '$prefix', '0'],
      bad: [
        ['no groups', ['1', '$prefix']],
        ['a sorted set without its unit', ['1', '$prefix', '0', 'zsets', 'k']],
        ['a sorted set with a unit of 7', ['1', '$prefix', 'zsets', 'k', '7']],
      ],
    },
    'intake-zmove': { valid: ['1000', '10', '4096', '10'], bad: [] },
    'intake-commit': { valid: ['1', '0'], bad: [] },
    'ratelimit-take': { valid: ['all', '10', '1000', '10', '1', '0'], bad: [] },
    'ratelimit-list': { valid: ['$prefix', '100'], bad: [] },
    list: {
      valid: ['1', 'ready', '10', '100', '', '0', '0', 'first'],
      bad: [
        [
          'an after-cursor without its position',
          ['1', 'ready', '10', '100', '', '0', '0', 'after'],
        ],
        [
          'a cursor phase of 2',
          ['1', 'ready', '10', '100', '', '0', '0', 'after', '2', '=', '5', 'm'],
        ],
        [
          'a cursor score not a number',
          ['1', 'ready', '10', '100', '', '0', '0', 'after', '0', '=', 'hi', 'm'],
        ],
      ],
    },
    'list-counts': { valid: ['1', '0'], bad: [] },
    'intake-adopt': { valid: [], bad: [['an argument', ['x']]] },
    'intake-close': { valid: [], bad: [['an argument', ['x']]] },
    'ratelimit-held': { valid: [], bad: [['an argument', ['x']]] },
    'flow-add': {
      valid: ['1', '', '1', 'args-flow', 'c', '', '|0|3|f1000|sbody', '0', '', ''],
      bad: [
        ['nothing at all', []],
        ['a node cut short', ['1', '', '1', 'args-flow', 'c', '', '|0|3|f1000|sbody']],
        ['an empty id', ['1', '', '1', '', 'c', '', '|0|3|f1000|sbody', '0', '', '']],
        ['an empty record', ['1', '', '1', 'args-flow', 'c', '', '', '0', '', '']],
        ['a score not a number', ['1', '', '1', 'args-flow', 'c', 'soon', 'r', '0', '', '']],
        ['a parent ref without a group', ['1', '', '1', 'n', 'c', '', 'r', '0', 'x:m:p', '']],
        ['children not JSON', ['1', '', '1', 'n', 'c', '', 'r', '0', '', '[1']],
        ['children not a list of entries', ['1', '', '1', 'n', 'c', '', 'r', '0', '', '[1]']],
        ['a child with no id', ['1', '', '1', 'n', 'c', '', 'r', '0', '', '[[0,"",0,""]]']],
      ],
    },
    'flow-child-done': {
      valid: ['1', 'args-kid', '0:m:args-dad\nd0|u'],
      bad: [
        ['nothing at all', []],
        ['an entry without its outcome', ['1', 'kid', '0:m:dad']],
        ['an entry for another group', ['1', 'kid', '7:m:dad\nd0|u']],
        ['an outcome of an unknown kind', ['1', 'kid', '0:m:dad\nq']],
      ],
    },
    'flow-sweep': {
      valid: ['10', '10', 'args-kid', '0:m:args-dad\nd0|u'],
      bad: [
        ['nothing at all', []],
        ['a child id without its entry', ['10', '10', 'kid']],
        ['an empty child id', ['10', '10', '', 'x']],
      ],
    },
    'flow-children': {
      valid: ['all', '$id'],
      bad: [
        ['an empty id', ['all', '']],
        ['no ids', ['states']],
        ['neither all nor states', ['some', '$id']],
      ],
    },
    'flow-states': { valid: ['1', '$id'], bad: [['no ids', ['1']]] },
    'flow-taken': {
      valid: ['$id', 'a'.repeat(40)],
      bad: [
        ['nothing at all', []],
        ['an id without its hash', ['$id']],
        ['an empty id', ['', 'a'.repeat(40)]],
        ['a hash not 40 hex digits', ['$id', 'sha1']],
      ],
    },
    'intake-alive': {
      valid: ['launcher-1', '6000'],
      bad: [['a holding list without its entry', ['launcher-1', '6000', 'list']]],
    },
  };
  const entry = table[name];
  if (!entry) throw new Error(`no malformed cases for script ${name}: add some here`);
  return { valid: entry.valid, bad: [...entry.bad, ...badValues(name, entry.valid)] };
}

/**
 * Malformed values at positions whose kind is known: numbers get text, negative and huge
 * values; names of a choice get another word; ids and tokens an empty text.
 */
function badValues(name: string, valid: Args): Case[] {
  const numbers: Record<string, number[]> = {
    add: [],
    'id-block': [1],
    claim: [1, 2, 3, 4, 6, 7, 10, 13],
    fail: [1, 7],
    reschedule: [1],
    inspect: [1, 3],
    counts: [1],
    'dead-list': [1, 2, 3, 5],
    'dead-retry': [2],
    'dead-purge': [2],
    'schedule-upsert': [1, 7, 9, 10, 11, 12, 13],
    'schedule-remove': [2],
    'schedule-advance': [1, 3, 5, 6],
    'intake-dead': [4],
    format: [1],
    'watch-many': [1, 3],
    'intake-commit': [1, 2],
    'intake-alive': [2],
    'intake-zmove': [1, 2, 3, 4],
    'ratelimit-take': [2, 3, 4, 5, 6],
    'ratelimit-list': [2],
    list: [1, 3, 4, 6, 7],
    'list-counts': [1, 2],
    'flow-add': [1, 3, 8],
    'flow-child-done': [1],
    'flow-sweep': [1, 2],
    'flow-states': [1],
  };
  const words: Record<string, [number, string][]> = {
    claim: [
      [5, 'no header'],
      [8, ''],
      [9, 'a,,b'],
      [11, 'forever'],
      [12, 'on'],
    ],
    fail: [
      [2, ''],
      [5, 'maybe'],
      [8, 'on'],
    ],
    reschedule: [
      [3, 'tomorrow'],
      [4, 'yes'],
      [3, 'd-5'],
    ],
    'dead-list': [[4, 'middle']],
    'dead-retry': [[1, 'some']],
    'dead-purge': [[1, 'some']],
    'schedule-upsert': [
      [2, ''],
      [4, 'not json'],
      [4, '[1, 2]'],
    ],
    'schedule-advance': [[2, '']],
    'schedule-home': [
      [1, 'take'],
      [2, ''],
    ],
    'intake-dead': [[1, '']],
    'watch-many': [[2, '']],
    'intake-alive': [[1, '']],
    'ratelimit-take': [[1, '']],
    'ratelimit-list': [[1, '']],
    list: [
      [2, 'sleeping'],
      [8, 'end'],
    ],
    'flow-add': [
      [2, 'on'],
      [5, 'x'],
    ],
  };
  const out: Case[] = [];
  for (const position of numbers[name] ?? []) {
    out.push([`ARGV[${position}] not a number`, set(valid, position, 'x1')]);
    out.push([`ARGV[${position}] negative`, set(valid, position, '-1')]);
    out.push([`ARGV[${position}] huge`, set(valid, position, HUGE)]);
  }
  for (const [position, value] of words[name] ?? []) {
    out.push([`ARGV[${position}] "${value}"`, set(valid, position, value)]);
  }
  // Scripts with a fixed number of arguments (or a fixed head) refuse one short or too many.
  const open = ['ack', 'extend', 'release', 'claim', 'spill-drop', 'watch-many', 'add'];
  open.push('flow-sweep', 'flow-children', 'flow-states', 'flow-taken'); // any number of ids
  if (valid.length > 0 && !open.includes(name)) out.push(...shortAndLong(valid));
  if (name === 'claim' || name === 'extend' || name === 'release') {
    out.push(['the last argument missing', valid.slice(0, -1)]);
  }
  return out;
}
