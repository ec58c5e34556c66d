// The bench's end of skyq-handler.ts: hears every handler start the actors report.
import { BroadcastChannel } from 'node:worker_threads';
import { benchChannel, type StartBatch } from './start-reporter.js';

export type OnStart = (id: string, dueAt: number, start: number) => void;

/** Listens on every group's channel until close(). */
export function listenForStarts(groups: number, onStart: OnStart): { close(): void } {
  const channels = Array.from({ length: groups }, (_, g) => new BroadcastChannel(benchChannel(g)));
  const onMessage = (event: unknown) => {
    const { ids, times } = (event as MessageEvent).data as StartBatch;
    ids.split('\n').forEach((id, i) => {
      onStart(id, times[2 * i] as number, times[2 * i + 1] as number);
    });
  };
  for (const channel of channels) channel.onmessage = onMessage;
  return {
    close: () => {
      for (const channel of channels) channel.close();
    },
  };
}
