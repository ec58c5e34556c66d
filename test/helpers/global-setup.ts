import { redisNotInstalledError, redisServerAvailable } from '../../src/redis/server.js';

/**
 * Every suite spawns private redis-server processes; without the binary they would all fail one
 * by one with confusing errors, so stop the run at once with the install hint instead.
 */
export default function setup(): void {
  if (!redisServerAvailable()) throw redisNotInstalledError();
}
