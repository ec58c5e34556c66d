// worker_threads entry of the coordinator: serves it to the launcher over comlink.
import { parentPort, workerData } from 'node:worker_threads';
import { Coordinator, type CoordinatorData } from '../src/runtime/coordinator.js';
import { serve } from '../src/runtime/rpc.js';

if (!parentPort) throw new Error('workers/coordinator.js runs as a worker thread');
serve(new Coordinator(workerData as CoordinatorData), parentPort);
parentPort.postMessage({ kind: 'ready' });
