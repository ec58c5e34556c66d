import { redisNotInstalledError, redisServerAvailable } from '../../src/redis/server.js';
import { ensureFreshBuild } from './fresh-build.js';
import { ROOT } from './runtime.js';

/**
 * Every suite spawns private redis-server processes; without the binary they would all fail one
 * by one with confusing errors, so stop the run at once with the install hint instead. And the
 * actors run from dist/: a build older than the sources is rebuilt before any test starts.
 */
export default function setup(): void {
  if (!redisServerAvailable()) throw redisNotInstalledError();
  ensureFreshBuild(ROOT, (line) => console.log(line));
}
