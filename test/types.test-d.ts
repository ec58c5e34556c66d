/**
 * The public types, checked by `tsc -p test/tsconfig.json` (npm run lint), not run: a typed
 * handler reads its body's fields, every option type a public signature takes can be imported,
 * options that cannot go together do not type-check (each @ts-expect-error fails the check when
 * the line it marks compiles), and durations take '5s' wherever a delay goes.
 */
import type {
  AddOptions,
  Handler,
  JobContext,
  KeepDoneOption,
  ListenAddress,
  Message,
  RateLimitOption,
  RescheduleOptions,
  Retention,
  ScheduleSpec,
  ScheduleState,
  StartOptions,
  TlsOptions,
} from '../src/index.js';
import { Queue } from '../src/index.js';

/** An interface, as users write them: no index signature, so not a JsonValue by itself. */
interface Order {
  orderId: string;
  cents: number;
}

// A typed handler reads its body's fields (the README's job.body.orderId).
export const handler: Handler<Order> = async (job, context: JobContext) => {
  const id: string = job.body.orderId;
  context.signal.throwIfAborted();
  return `${id}: ${job.body.cents}`;
};
// @ts-expect-error the body has no such field
export const wrong: Handler<Order> = async (job) => job.body.orderNumber;

export async function typedQueue(queue: Queue<Order>): Promise<void> {
  await queue.add({ orderId: '1', cents: 100 }, { delay: '45m' });
  // @ts-expect-error a body of another shape
  await queue.add({ order: 1 });
  await queue.addBulk([{ body: { orderId: '2', cents: 5 }, options: { runAt: new Date() } }]);
  const [job] = await queue.claim(0);
  if (job) {
    const message: Message<Order> = job;
    const cents: number = message.body.cents;
    await queue.ack([message]);
    await queue.fail(message, new Error(`${cents}`));
  }
  const info = await queue.get('order:1');
  if (info) {
    const order: Order = info.body;
    order.orderId.toUpperCase();
  }
}

// Without a type parameter, bodies are whatever skyq stores: JSON values, strings, Buffers.
export const untyped = new Queue({ redis: 'redis://127.0.0.1:1', groups: 1 });

// Delays take a duration string, as every, dedupeMs and the CLI do.
export const inFive: AddOptions = { delay: '5s', dedupeMs: '10m', id: 'x' };
export const at: AddOptions = { runAt: Date.now() + 1000 };
// @ts-expect-error delay and runAt cannot go together
export const both: AddOptions = { delay: 1000, runAt: new Date() };
export const later: RescheduleOptions = { delay: '10m', group: 3 };
// @ts-expect-error delay and runAt cannot go together
export const twice: RescheduleOptions = { delay: '10m', runAt: 0 };

// A schedule is every or cron, never both and never neither; tz goes with cron only.
export const heartbeat: ScheduleSpec = { every: '10s', body: 'ping', missed: 'skip' };
export const nightly: ScheduleSpec = { cron: '0 3 * * *', tz: 'Europe/Berlin', name: 'report' };
// @ts-expect-error every and cron together
export const everyAndCron: ScheduleSpec = { every: '10s', cron: '0 3 * * *' };
// @ts-expect-error neither every nor cron
export const neither: ScheduleSpec = { body: 'x' };
// @ts-expect-error tz is for cron
export const everyInZone: ScheduleSpec = { every: 1000, tz: 'UTC' };
export async function schedules(queue: Queue): Promise<ScheduleState> {
  return queue.schedules.upsert('nightly', nightly);
}

// Every option type a public signature takes can be named by users.
export const options: StartOptions = {
  handler: './handler.mjs',
  rateLimit: { max: 100, perMs: 1000 } satisfies RateLimitOption,
  keepDone: { count: 10, ageMs: 60_000 } satisfies KeepDoneOption,
  keepDead: { count: 10 } satisfies Partial<Retention>,
  tls: {} satisfies TlsOptions,
  http: { listen: { host: '127.0.0.1', port: 0 } satisfies ListenAddress },
};
