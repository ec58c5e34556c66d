// How far a server's clock (TIME) is from this process's wall clock. skyq's due times are on
// Redis's clock (scripts read TIME), so a master whose clock is off runs `runAt` messages off
// by that much as seen from the caller's clock: the launcher measures it and says so.
import type { Redis } from 'ioredis';

const SAMPLES = 3;

/**
 * Redis time minus local time, in ms (positive: the server is ahead). The tightest of a few
 * round trips is kept: its midpoint is the best guess of when the server read its clock.
 */
export async function measureSkew(
  server: Redis,
  wallClock: () => number = Date.now,
): Promise<number> {
  let best = { roundTrip: Number.POSITIVE_INFINITY, skew: 0 };
  for (let i = 0; i < SAMPLES; i++) {
    const sent = wallClock();
    const [seconds, micros] = (await server.time()) as [number | string, number | string];
    const received = wallClock();
    if (received - sent < best.roundTrip) {
      const redisMs = Number(seconds) * 1000 + Number(micros) / 1000;
      best = { roundTrip: received - sent, skew: redisMs - (sent + received) / 2 };
    }
  }
  return Math.round(best.skew);
}
