/**
 * Process control for the fault suite: launchers as child processes (`skyq start`, or a Node
 * child running startActors), killed with SIGKILL or stopped with SIGTERM; Redis servers frozen
 * with SIGSTOP and thawed with SIGCONT.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type CliChild, spawnCli, spawnNode } from '../../helpers/runtime.js';

const LAUNCHER = new URL('../fixtures/launcher.mjs', import.meta.url).pathname;

/** Resolves when the child's stdout matches `pattern`; rejects when it ends first or times out. */
export async function waitForOutput(run: CliChild, pattern: RegExp, timeoutMs = 30_000) {
  let ended = false;
  void run.done.then(() => {
    ended = true;
  });
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(run.stdout())) {
    if (ended || Date.now() > deadline) {
      const why = ended ? 'it ended' : `${timeoutMs} ms passed`;
      throw new Error(`${pattern} never showed (${why})\n${run.stdout()}\n${run.stderr()}`);
    }
    await sleep(25);
  }
}

/** `skyq start <args>` as a child process, once its actors are ready. */
export async function startSkyq(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliChild> {
  const run = spawnCli(['start', ...args], env);
  await waitForOutput(run, /actors? ready/);
  return run;
}

/** A Node child running startActors(options), once its actors are ready. */
export async function startLauncherChild(
  options: Record<string, unknown>,
  env: NodeJS.ProcessEnv = {},
  nodeArgs: string[] = [],
): Promise<CliChild> {
  const run = spawnNode(LAUNCHER, [JSON.stringify(options)], env, nodeArgs);
  await waitForOutput(run, /^ready$/m);
  return run;
}

/** kill -9, and wait until the process is gone. */
export async function killHard(run: CliChild): Promise<void> {
  run.child.kill('SIGKILL');
  await run.done;
}

/** SIGTERM (a graceful drain); resolves its exit code, or kills it after `timeoutMs`. */
export async function stopGracefully(run: CliChild, timeoutMs = 30_000) {
  run.child.kill('SIGTERM');
  const timer = setTimeout(() => run.child.kill('SIGKILL'), timeoutMs);
  try {
    return await run.done;
  } finally {
    clearTimeout(timer);
  }
}

/** SIGSTOP for `ms`, then SIGCONT; resolves the wall-clock times of both. */
export async function freeze(
  pid: number,
  ms: number,
): Promise<{ stoppedAt: number; resumedAt: number }> {
  process.kill(pid, 'SIGSTOP');
  const stoppedAt = Date.now();
  try {
    await sleep(ms);
  } finally {
    process.kill(pid, 'SIGCONT');
  }
  return { stoppedAt, resumedAt: Date.now() };
}
