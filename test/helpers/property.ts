/**
 * fast-check parameters for the property suites. SKYQ_PROPERTY_RUNS sets how many runs (else
 * the suite's CI figure); SKYQ_PROPERTY_SEED picks the seed: fixed in CI (CI set), random
 * elsewhere. fast-check names the seed (and the path) of a failure in its message, so a
 * failing run replays with SKYQ_PROPERTY_SEED=<seed>.
 */
const CI_SEED = 24;

export function propertyParameters(ciRuns: number): { seed: number; numRuns: number } {
  const runs = Number(process.env.SKYQ_PROPERTY_RUNS ?? ciRuns);
  const given = process.env.SKYQ_PROPERTY_SEED;
  const seed =
    given !== undefined && given !== ''
      ? Number(given)
      : process.env.CI
        ? CI_SEED
        : Math.floor(Math.random() * 2 ** 31);
  if (!Number.isInteger(runs) || runs < 1)
    throw new Error('SKYQ_PROPERTY_RUNS: a whole number ≥ 1');
  if (!Number.isInteger(seed)) throw new Error('SKYQ_PROPERTY_SEED: a whole number');
  return { seed, numRuns: runs };
}
