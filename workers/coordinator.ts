// worker_threads entry of the coordinator: serves it to the launcher over comlink. Bundled as
// CommonJS and started like the actors' (workers/actor.ts).
import { parentPort, workerData } from 'node:worker_threads';
import { Coordinator, type CoordinatorData } from '../src/runtime/coordinator.js';
import { serve } from '../src/runtime/rpc.js';

export function main(): void {
  if (!parentPort) throw new Error('workers/coordinator.js runs as a worker thread');
  serve(new Coordinator(workerData as CoordinatorData), parentPort);
  parentPort.postMessage({ kind: 'ready' });
}
