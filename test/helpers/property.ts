/**
 * fast-check parameters for the property tests: SKYQ_PROPERTY_RUNS (how many runs; each test
 * gives its CI default) and SKYQ_PROPERTY_SEED (the seed: fixed in CI, random locally).
 * fast-check prints the seed and path of a failing run, to run it again with the same seed.
 */
const CI_SEED = 424242;

export function propertyParams(ciRuns: number): { seed: number; numRuns: number } {
  const runs = process.env.SKYQ_PROPERTY_RUNS;
  const seed = process.env.SKYQ_PROPERTY_SEED;
  const numRuns = runs === undefined || runs === '' ? ciRuns : Number(runs);
  if (!Number.isInteger(numRuns) || numRuns < 1)
    throw new Error(`SKYQ_PROPERTY_RUNS must be a whole number from 1 (got "${runs}")`);
  if (seed !== undefined && seed !== '') {
    if (!/^-?\d+$/.test(seed))
      throw new Error(`SKYQ_PROPERTY_SEED must be an integer (got "${seed}")`);
    return { seed: Number(seed), numRuns };
  }
  return { seed: process.env.CI ? CI_SEED : Math.floor(Math.random() * 2 ** 31), numRuns };
}
