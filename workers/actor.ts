// worker_threads entry of one actor: wires the ports and hands over to src/. Bundled as
// CommonJS (dist/workers/actor.bundle.cjs); dist/workers/actor.js starts it through
// src/runtime/bundle-start.ts, which keeps V8's compiled code of it between starts.
import { parentPort, workerData } from 'node:worker_threads';
import { type ActorThreadData, runActorThread } from '../src/runtime/actor-thread.js';
import { type Importer, useImporter } from '../src/runtime/handler-load.js';

/**
 * Resolves once the actor said ready (or failed); its loop goes on after. `importer` loads the
 * user's handler: the import() of the module that started the bundle (handler-load.ts says why).
 */
export function main(importer: Importer): Promise<void> {
  if (!parentPort) throw new Error('workers/actor.js runs as a worker thread');
  useImporter(importer);
  return runActorThread(parentPort, workerData as ActorThreadData);
}
