/**
 * `skyq start` checks every flag before it starts or prints anything: a refused flag starts no
 * redis-server, writes no ./.skyq, and says nothing of a server it shares; and the hint for a
 * Redis whose password skyq does not hold shows a placeholder to replace, not `***`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { knock } from '../src/cli/embedded.js';
import { heldPort, startStandalone } from './helpers/redis.js';
import {
  CLI,
  type CliChild,
  finish,
  removeTempDirs,
  spawnNode,
  tempDir,
  untilStartReady,
} from './helpers/runtime.js';

afterAll(removeTempDirs);

/** The compiled CLI run from `cwd` with nothing named and the embedded port set. */
function cliIn(cwd: string, port: number, args: string[]): CliChild {
  return spawnNode(CLI, args, { REDIS_URL: undefined, SKYQ_EMBEDDED_PORT: String(port) }, [], cwd);
}

const lines = (text: string) => text.split('\n').filter((line) => line.trim() !== '');

/** Bad starts, each with the start of the one line that refuses it. */
const BAD_STARTS: [string[], string][] = [
  [['--lease', '5'], 'skyq: lease: expected a duration with a unit'],
  [['--grace', 'soon'], 'skyq: grace: expected a duration with a unit'],
  [['--timeout', '-1s'], 'skyq: timeout: expected a duration with a unit'],
  [['--pool', 'two'], 'skyq: pool: expected a whole number'],
  [['--pool', '2'], 'skyq: pool: needs a handler module'],
  [['--keep-done', 'lots'], 'skyq: keep-done'],
  [['--keep-dead', 'x,y'], 'skyq: keep-dead'],
  [['--intake', ''], 'skyq: intake'],
  // On the command line a list name holds no "=": what follows one is a group number.
  [
    ['--intake', 'high,normal=x'],
    'skyq: intake[1].group: must be a group number from 0 to 1 (got "x")',
  ],
  [
    ['--intake', 'high,normal=-1'],
    'skyq: intake[1].group: must be a group number from 0 to 1 (got "-1")',
  ],
  [
    ['--intake', 'high=1=2'],
    'skyq: intake[0].group: must be a group number from 0 to 1 (got "1=2")',
  ],
  [['--intake', 'high,=1'], 'skyq: intake[1].list: must be a non-empty string (got "")'],
  [['--zset-intake', 'seta'], 'skyq: zset-intake: expected KEY:UNIT'],
  // skyq's own keys, which an intake would empty (test/intake-own-keys.test.ts has them all).
  [['--intake', 'task_group:1'], "skyq: intake[0].list: is one of skyq's own groups"],
  [['--intake', 'high,{task_group:1}:ready'], "skyq: intake[1].list: is one of skyq's own keys"],
  [['--intake', 'task_group:launchers'], 'own keys for prefix task_group (docs/keys.md)'],
  [['--zset-intake', '{task_group:0}:dead:ms'], "skyq: zsetIntake[0].key: is one of skyq's own"],
  [['--zset-intake', 'seta:ms=7'], 'skyq: zsetIntake[0].group'],
  [['--handler', './no-such-handler.mjs'], 'skyq: handler'],
  [['--only', '12'], 'skyq: only'],
  [['--lease', '50ms'], 'skyq: leaseMs: must be at least 100 ms'],
  [['--http', 'not an address'], 'skyq: http'],
];

describe('skyq start with a bad flag and no Redis named', () => {
  it('starts nothing, writes nothing and prints only the error', async () => {
    const port = await heldPort();
    const cwd = tempDir('skyq-start-checks-');
    for (const [flags, error] of BAD_STARTS) {
      const run = await finish(cliIn(cwd, port, ['start', '--groups', '2', ...flags]));
      expect([flags, run.code]).toEqual([flags, 1]);
      expect([flags, run.stdout]).toEqual([flags, '']);
      expect([flags, lines(run.stderr)[0]]).toEqual([flags, expect.stringContaining(error)]);
      expect([flags, await knock(port)]).toEqual([flags, 'down']);
      expect([flags, existsSync(join(cwd, '.skyq'))]).toEqual([flags, false]);
    }
  });

  it('says nothing of the running launcher it would share a server with', async () => {
    const port = await heldPort();
    const cwd = tempDir('skyq-start-checks-');
    const owner = cliIn(cwd, port, ['start', '--groups', '1', '--log-dir', 'logs']);
    try {
      await untilStartReady(owner);
      for (const [flags, error] of BAD_STARTS.slice(0, 3)) {
        const run = await finish(cliIn(cwd, port, ['start', '--groups', '1', ...flags]));
        expect([flags, run.code]).toEqual([flags, 1]);
        expect([flags, run.stdout]).toEqual([flags, '']);
        expect([flags, lines(run.stderr)[0]]).toEqual([flags, expect.stringContaining(error)]);
      }
    } finally {
      owner.child.kill('SIGINT');
      await finish(owner, '', 30_000);
    }
  });
});

it('the hint for a Redis skyq has no password for shows a placeholder, not the mask', async () => {
  const port = await heldPort();
  const other = await startStandalone({ port, password: 'not-yours' });
  try {
    const run = await finish(cliIn(tempDir('skyq-start-checks-'), port, ['start']));
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`--redis redis://:<password>@127.0.0.1:${port}`);
    expect(run.stderr).not.toContain('***');
    expect(run.stderr).not.toContain('not-yours');
  } finally {
    await other.stop();
  }
});
