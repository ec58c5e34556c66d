// The dashboard: polls /api/overview every second for the latest figures and the samples it
// has not seen yet, and redraws totals, tables and charts from them. While Redis does not
// answer, figures it would have given show – (not 0) and every action is disabled.
import { get, post } from './api.js';
import { lineChart } from './charts.js';
import { DeadLetterView } from './dead-letters.js';
import {
  confirmAction,
  el,
  formatCount,
  formatMs,
  replaceChildren,
  setRedisUp,
  setText,
  toast,
} from './dom.js';
import { JobView } from './job.js';
import { JobBrowser } from './jobs.js';
import { rateLimitsTable } from './rate-limits.js';
import { openOccurrences } from './schedule-jobs.js';
import { schedulesTable } from './schedules.js';
import { labelTables } from './table-labels.js';
import { renderActors, renderGroups, renderIntake, renderNames } from './tables.js';

const POLL_MS = 1000;
const KEEP_MS = 10 * 60_000;

let samples = [];
let lastAt = 0;
let deadShown = null;

labelTables(document.querySelector('main'));
// An action in the job view changes what the lists show: they load again.
const jobView = new JobView(() => {
  void jobs.reload();
  void deadLetters.reload();
  void refresh().catch(() => undefined);
});
const deadLetters = new DeadLetterView(() => void refresh(), jobView);
const jobs = new JobBrowser(jobView);
openOccurrences(document.getElementById('schedules'), jobView);

async function setPaused(group, pause) {
  try {
    const { changed } = await post(
      `/api/groups/${pause ? 'pause' : 'resume'}`,
      group === null ? {} : { group },
    );
    toast(
      `${pause ? 'paused' : 'resumed'} ${changed.length ? `group(s) ${changed.join(', ')}` : 'nothing new'}`,
    );
  } catch (error) {
    toast(error.message, 'error');
  }
  await refresh();
}

document.getElementById('pause-all').addEventListener('click', async () => {
  const ask = 'Pause every group? No launcher claims from a paused group.';
  if (await confirmAction(ask, { ok: 'Pause all', danger: false })) await setPaused(null, true);
});
document.getElementById('resume-all').addEventListener('click', () => void setPaused(null, false));

function mergeSamples(fresh) {
  samples = samples.concat(fresh);
  const newest = samples[samples.length - 1]?.at ?? 0;
  samples = samples.filter((s) => s.at > newest - KEEP_MS);
  lastAt = newest || lastAt;
}

function describeSource(data) {
  const where = `prefix ${data.prefix} · ${data.groups} groups`;
  if (data.mode === 'launcher') {
    const launcher = data.launchers[0];
    return launcher ? `launcher ${launcher.id} on ${launcher.host} · ${where}` : where;
  }
  return `${data.launchers.length} launcher(s) publishing to Redis · ${where}`;
}

function drawCharts() {
  const times = samples.map((s) => s.at);
  // Taken by the server on each launcher's own clock (see throughput-window.ts).
  const rates = samples.map((s) => s.rate ?? null);
  lineChart(document.getElementById('throughput-chart'), {
    title: 'Throughput, done per second',
    times,
    series: [{ label: 'done / s', values: rates, className: 'rate' }],
    format: (v) => formatCount(Math.round(v)),
  });
  lineChart(document.getElementById('lateness-chart'), {
    title: 'Lateness, handler start minus due time',
    times,
    series: [
      { label: 'p99', values: samples.map((s) => s.lateness.p99), className: 'p99' },
      { label: 'p50', values: samples.map((s) => s.lateness.p50), className: 'p50' },
      { label: 'mean', values: samples.map((s) => s.lateness.mean), className: 'mean' },
    ],
    format: formatMs,
  });
}

const schedules = schedulesTable(document.querySelector('#schedules tbody'), (error) =>
  setText('status', `schedule not removed: ${error.message}`),
);
const rateLimits = rateLimitsTable(document.getElementById('rate-limits'));
let polls = 0;

async function refresh() {
  const data = await get(`/api/overview?since=${lastAt}`);
  mergeSamples(data.samples);
  setText('source', describeSource(data));
  setText(
    'status',
    data.error
      ? `cannot read Redis: ${data.error}`
      : `updated ${new Date(data.at ?? Date.now()).toLocaleTimeString()}`,
  );
  document.getElementById('status').classList.toggle('error', Boolean(data.error));
  // Depths are known when the last reading worked; a stale one is not shown as now.
  const known = !data.error && data.at !== null;
  setRedisUp(known);
  renderServerWarnings(data.servers ?? []);
  const sum = (list, pick) => list.reduce((total, item) => total + (pick(item) ?? 0), 0);
  const readable = data.depths.filter((d) => !d.error);
  for (const name of ['delayed', 'ready', 'active', 'dead']) {
    const all = known && readable.length === data.depths.length;
    setText(`total-${name}`, all ? formatCount(sum(data.depths, (d) => d[name])) : '–');
  }
  // Counted by the actors: unknown while no reading has told of any.
  const counted = data.actors.length > 0 || known;
  setText('total-done', counted ? formatCount(sum(data.actors, (a) => a.done)) : '–');
  setText('total-rate', counted ? formatCount(sum(data.actors, (a) => a.ratePerSecond)) : '–');
  const lastMinute = samples.filter((s) => s.at > (data.at ?? 0) - 60_000);
  const worst = Math.max(-1, ...lastMinute.map((s) => s.lateness.p99 ?? s.lateness.mean ?? -1));
  setText('total-late', formatMs(worst < 0 ? null : worst));
  // Never read yet: a row per group all the same, each unknown.
  const depths =
    data.depths.length > 0
      ? data.depths
      : Array.from({ length: data.groups }, (_, group) => ({ group, error: 'not read yet' }));
  renderGroups(
    document.querySelector('#groups tbody'),
    data.prefix,
    depths,
    samples,
    (group, pause) => void setPaused(group, pause),
    known,
  );
  renderActors(document.querySelector('#actors tbody'), data.actors);
  renderNames(document.querySelector('#names tbody'), data.names ?? []);
  renderIntake(document.getElementById('intake'), data.intake ?? []);
  drawCharts();
  deadLetters.setGroups(data.groups);
  jobs.setGroups(data.groups);
  // What is read from Redis on demand waits until Redis answers.
  if (!known) return;
  if (polls++ % 5 === 0) await schedules.load();
  await rateLimits.load();
  if (polls % 5 === 1) await jobs.load();
  const dead = sum(data.depths, (d) => d.dead);
  if (dead !== deadShown) {
    deadShown = dead;
    await deadLetters.load();
  }
}

/** An evicting maxmemory-policy, a clock more than a second off, lost data, per Redis server. */
function renderServerWarnings(servers) {
  const lines = [];
  for (const s of servers) {
    if (s.evicting)
      lines.push(
        `Redis ${s.server}: maxmemory-policy ${s.policy} deletes queued messages when memory is full. Fix: CONFIG SET maxmemory-policy noeviction`,
      );
    if (s.dataLost)
      lines.push(
        `Redis ${s.server} came back ${s.dataLost.older ? 'with older data than skyq had written' : "without skyq's data"} at ${new Date(s.dataLost.at).toLocaleString()}: groups ${s.dataLost.groups.join(',')} lost ${s.dataLost.older ? 'what they took since that copy was made' : 'what they held'}${s.dataLost.before ? ` (${s.dataLost.before.delayed + s.dataLost.before.ready + s.dataLost.before.active} pending, ${s.dataLost.before.dead} dead at the last reading)` : ''}. See "Redis lost its data" in docs/OPERATIONS.md`,
      );
    if (s.skewMs !== null && Math.abs(s.skewMs) > 1000)
      lines.push(
        `Redis ${s.server}: its clock is ${(Math.abs(s.skewMs) / 1000).toFixed(1)} s ${s.skewMs > 0 ? 'ahead of' : 'behind'} this host's (due times are on Redis's clock)`,
      );
  }
  const box = document.getElementById('server-warnings');
  box.hidden = lines.length === 0;
  replaceChildren(box, ...lines.map((line) => el('p', {}, line)));
}

async function loop() {
  try {
    await refresh();
  } catch (error) {
    setText('status', `no answer from the server: ${error.message}`);
    document.getElementById('status').classList.add('error');
    setRedisUp(false);
  }
  setTimeout(loop, POLL_MS);
}

void loop();
