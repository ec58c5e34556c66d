// worker_threads entry of one actor: wires the ports and hands over to src/.
import { parentPort, workerData } from 'node:worker_threads';
import { type ActorThreadData, runActorThread } from '../src/runtime/actor-thread.js';

if (!parentPort) throw new Error('workers/actor.js runs as a worker thread');
await runActorThread(parentPort, workerData as ActorThreadData);
