// The shape skyq runs in for the benchmarks, in a module of its own: `skyq bench` shows these
// defaults in its help, which must not load the runtime that bench/skyq.ts drives.

export interface SkyqShape {
  actors: number;
  concurrency: number;
  batch: number;
}

/** What `npm run bench` compares with; bench/targets.ts uses startActors' own defaults. */
export const DEFAULT_SKYQ_SHAPE: SkyqShape = { actors: 10, concurrency: 500, batch: 500 };
