// The soak's no-op handler. With `node --expose-gc` (workers inherit it) it also collects
// garbage when the soak asks, so each heap sample reads what is live, not what is pending
// collection.
import { BroadcastChannel } from 'node:worker_threads';

export const SOAK_GC_CHANNEL = 'skyq-soak-gc';

const collect = (globalThis as { gc?: () => void }).gc;
if (collect) {
  const channel = new BroadcastChannel(SOAK_GC_CHANNEL);
  channel.onmessage = () => collect();
  channel.unref();
}

export default function soakHandler(): void {}
