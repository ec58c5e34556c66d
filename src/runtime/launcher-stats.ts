// What a launcher reports about itself: per actor and in total. The same shape
// goes to launcher.stats(), to Redis for `skyq stats` in other processes, to
// /metrics and to the dashboard.
import type { HistogramData, Summary } from './histogram.js';
import type { IntakeListFigures } from './intake/figures.js';
import type { NameFigure } from './name-stats.js';
import type { ServerState } from './server-checks.js';
import type { BlockFigures, Counters, HistogramName } from './stat-block.js';

/** One actor's figures: its counters, state, histograms and rate. */
export interface ActorStat extends BlockFigures {
  /** its group */
  group: number;
  /** its worker thread's id */
  threadId: number;
  /**
   * done per second over the launcher's last publish interval (about a second); absent until
   * two were taken, when the launcher does not publish, and from launchers before 0.2
   */
  donePerSecond?: number;
}

/** One actor as its launcher sees it: up or not, restarts, and its figures. */
export interface ActorView {
  /** its group */
  group: number;
  /** ok: answering; down: no thread (restarting); hung: did not answer ping in time */
  status: 'ok' | 'down' | 'hung';
  /** times its thread was replaced */
  restarts: number;
  /** why its thread last ended unasked, if it did */
  lastCrash: string | null;
  /** its figures, when it has a thread */
  stat?: ActorStat;
}

/** What a launcher reports about itself, per actor and in total (`launcher.stats()`). */
export interface LauncherStats {
  /** the launcher's id (host, pid and a random part) */
  launcherId: string;
  /** the host it runs on */
  host: string;
  /** its process id */
  pid: number;
  /** when it started (epoch ms) */
  startedAt: number;
  /** when these figures were read */
  at: number;
  /** each actor, by group */
  actors: ActorView[];
  /** the lists this launcher's intake moves into skyq (absent without one) */
  intake?: IntakeListFigures[];
  /** every actor's figures added up */
  totals: Counters & {
    /** the histograms, merged */
    histograms: Record<HistogramName, HistogramData>;
    /** their percentiles, in ms */
    summary: Record<HistogramName, Summary>;
    /** per job name */
    names: NameFigure[];
  };
  /** each Redis server's eviction policy and clock skew (absent from launchers before 0.2) */
  servers?: ServerState[];
}
