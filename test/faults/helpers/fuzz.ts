/**
 * Seeded randomness for the fuzz tests: the same seed makes the same cases. The seed is fixed
 * (so CI runs the same cases every time) unless SKYQ_FUZZ_SEED names another, and each test
 * prints it, so a failure can be replayed:  SKYQ_FUZZ_SEED=<seed> npm run test:faults
 */
const DEFAULT_SEED = 20_240_611;

export function fuzzSeed(what: string): number {
  const seed = Number(process.env.SKYQ_FUZZ_SEED ?? DEFAULT_SEED);
  console.log(`${what}: fuzz seed ${seed} (replay: SKYQ_FUZZ_SEED=${seed} npm run test:faults)`);
  return seed;
}

export class Rng {
  #state: number;
  readonly seed: number;

  constructor(seed: number) {
    this.seed = seed;
    this.#state = seed >>> 0;
  }

  /** mulberry32: small, fast, and good enough to pick cases */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  /** an integer in [min, max] */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  bytes(length: number, from = 0, to = 255): Buffer {
    const out = Buffer.alloc(length);
    for (let i = 0; i < length; i++) out[i] = this.int(from, to);
    return out;
  }

  /** text of `length` characters drawn from `alphabet` */
  text(length: number, alphabet: string): string {
    const chars = [...alphabet];
    return Array.from({ length }, () => this.pick(chars)).join('');
  }
}

export const ASCII =
  'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:-_./!@#$%^&*+=~';
export const UNICODE = 'héllo wörld ñ ß Ω 中文 日本語 한국어 🙂🚀 ‏עברית‎ \u200b \ufeff';
