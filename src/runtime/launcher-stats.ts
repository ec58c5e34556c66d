// What a launcher reports about itself: per actor and in total. The same shape
// goes to launcher.stats(), to Redis for `skyq stats` in other processes, to
// /metrics and to the dashboard.
import type { HistogramData, Summary } from './histogram.js';
import type { IntakeListFigures } from './intake/figures.js';
import type { NameFigure } from './name-stats.js';
import type { ServerState } from './server-checks.js';
import type { BlockFigures, Counters, HistogramName } from './stat-block.js';

export interface ActorStat extends BlockFigures {
  group: number;
  threadId: number;
  /**
   * done per second over the launcher's last publish interval (about a second); absent until
   * two were taken, when the launcher does not publish, and from launchers before 0.2
   */
  donePerSecond?: number;
}

export interface ActorView {
  group: number;
  /** ok: answering; down: no thread (restarting); hung: did not answer ping in time */
  status: 'ok' | 'down' | 'hung';
  restarts: number;
  lastCrash: string | null;
  stat?: ActorStat;
}

export interface LauncherStats {
  launcherId: string;
  host: string;
  pid: number;
  startedAt: number;
  /** when these figures were read */
  at: number;
  actors: ActorView[];
  /** the lists this launcher's intake moves into skyq (absent without one) */
  intake?: IntakeListFigures[];
  totals: Counters & {
    histograms: Record<HistogramName, HistogramData>;
    summary: Record<HistogramName, Summary>;
    names: NameFigure[];
  };
  /** each Redis server's eviction policy and clock skew (absent from launchers before 0.2) */
  servers?: ServerState[];
}
