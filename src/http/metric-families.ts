// The names and help texts of the actor series /metrics serves, and the histograms' bounds.
import type { CounterName, HistogramName } from '../runtime/stat-block.js';

/** Upper bounds in seconds; each one is a bound of the runtime's buckets, so counts are exact. */
export const DURATION_BOUNDS_SECONDS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
] as const;

export const DEPTHS = ['delayed', 'ready', 'active', 'dead'] as const;

export const ACTOR_COUNTERS: [CounterName, string, string][] = [
  ['claimed', 'skyq_messages_claimed_total', 'Messages leased by the actor.'],
  ['done', 'skyq_messages_done_total', 'Messages whose handler succeeded and were acknowledged.'],
  ['failed', 'skyq_messages_failed_total', 'Handler runs that threw, rejected or timed out.'],
  ['retried', 'skyq_messages_retried_total', 'Failures sent back to wait for another attempt.'],
  ['dead', 'skyq_messages_dead_total', 'Messages the actor dead-lettered.'],
  [
    'stale',
    'skyq_messages_stale_total',
    'Acks, failures or lease extensions refused because the lease had passed to another consumer.',
  ],
  [
    'heldBack',
    'skyq_messages_held_back_total',
    'Messages a claim held back for a per-name rate limit (unleased, no attempt counted).',
  ],
];

export const HISTOGRAMS: [HistogramName, string, string][] = [
  ['lateness', 'skyq_lateness_seconds', 'Handler start minus due time (Redis clock).'],
  ['handler', 'skyq_handler_duration_seconds', 'Handler start to settled.'],
  ['redisRtt', 'skyq_redis_round_trip_seconds', "Round trip of the actor's claim calls."],
];
