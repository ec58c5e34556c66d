/**
 * The top entries of V8 CPU profiles (`node --cpu-prof`, one .cpuprofile per thread), by self
 * time, summed over every file given: where a start-up or a run spends its CPU.
 *   node dist/bench/profile-top.js /tmp/prof [--by function|package] [--top 20] [--threads]
 *     [--window a:b ...]
 * `--window a:b` keeps only the samples taken between a and b (µs on the monotonic clock, as
 * bench/targets.js prints each run's): the run, without the threads' start-up.
 * `--by package` folds frames into node_modules packages, node internals, skyq's own code and
 * V8's pseudo-frames ((garbage collector), (program): parsing and compiling among it).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  startTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

type Grouping = 'function' | 'package';

function packageOf(url: string, name: string): string {
  if (!url) return name.startsWith('(') ? name : '(native)';
  const inModules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (inModules) return inModules[1] as string;
  if (url.startsWith('node:')) return 'node internals';
  return 'skyq';
}

function labelOf(node: ProfileNode, by: Grouping): string {
  const { functionName, url, lineNumber } = node.callFrame;
  if (by === 'package') return packageOf(url, functionName);
  const where = url
    ? ` ${url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/dist\//, 'dist/')}:${lineNumber + 1}`
    : '';
  return `${functionName || '(anonymous)'}${where}`;
}

type Window = [from: number, to: number];

/**
 * Self time in µs per label. Each sample is charged the time until the next one; with windows,
 * only samples taken inside one of them count.
 */
export function selfTimes(
  profile: CpuProfile,
  by: Grouping,
  windows: Window[] = [],
): Map<string, number> {
  const labels = new Map(profile.nodes.map((n) => [n.id, labelOf(n, by)]));
  const totals = new Map<string, number>();
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    if (windows.length > 0 && !windows.some(([from, to]) => at >= from && at <= to)) continue;
    const label = labels.get(profile.samples[i] as number) ?? '?';
    const delta = profile.timeDeltas[i + 1] ?? 0;
    totals.set(label, (totals.get(label) ?? 0) + delta);
  }
  return totals;
}

function profileFiles(paths: string[]): string[] {
  return paths.flatMap((p) =>
    statSync(p).isDirectory()
      ? readdirSync(p)
          .filter((f) => f.endsWith('.cpuprofile'))
          .map((f) => join(p, f))
      : [p],
  );
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      by: { type: 'string', default: 'function' },
      top: { type: 'string', default: '20' },
      threads: { type: 'boolean', default: false },
      window: { type: 'string', multiple: true, default: [] },
    },
  });
  const by = values.by === 'package' ? 'package' : 'function';
  const windows = (values.window ?? []).map((w): Window => {
    const [from, to] = w.split(':').map(Number);
    if (!Number.isFinite(from) || !Number.isFinite(to)) throw new Error(`--window a:b, not ${w}`);
    return [from as number, to as number];
  });
  const files = profileFiles(positionals);
  if (files.length === 0) throw new Error('give a .cpuprofile file or a directory of them');
  const all = new Map<string, number>();
  for (const file of files) {
    const times = selfTimes(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, by, windows);
    let sum = 0;
    for (const [label, us] of times) {
      all.set(label, (all.get(label) ?? 0) + us);
      sum += us;
    }
    if (values.threads) console.log(`${(sum / 1e6).toFixed(2)} s  ${file}`);
  }
  const total = [...all.values()].reduce((a, b) => a + b, 0);
  const idle = all.get('(idle)') ?? 0;
  console.log(
    `${files.length} profiles, ${(total / 1e6).toFixed(2)} s sampled, ` +
      `${((total - idle) / 1e6).toFixed(2)} s not idle`,
  );
  const rows = [...all.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top));
  for (const [label, us] of rows) {
    const share = ((100 * us) / (total - idle || 1)).toFixed(1).padStart(5);
    console.log(`${(us / 1000).toFixed(0).padStart(7)} ms ${share}%  ${label}`);
  }
}

main();
