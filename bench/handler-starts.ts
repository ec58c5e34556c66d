// The bench's end of skyq-handler.ts: hears every handler start the actors report.
import { BroadcastChannel } from 'node:worker_threads';
import { benchChannel } from './start-reporter.js';

export type OnStart = (id: string, dueAt: number, start: number) => void;

/** Listens on every group's channel until close(). */
export function listenForStarts(groups: number, onStart: OnStart): { close(): void } {
  const channels = Array.from({ length: groups }, (_, g) => new BroadcastChannel(benchChannel(g)));
  const onMessage = (event: unknown) => {
    const batch = (event as MessageEvent).data as (string | number)[];
    for (let i = 0; i < batch.length; i += 3) {
      onStart(batch[i] as string, batch[i + 1] as number, batch[i + 2] as number);
    }
  };
  for (const channel of channels) channel.onmessage = onMessage;
  return {
    close: () => {
      for (const channel of channels) channel.close();
    },
  };
}
