// `skyq start` with no Redis named: use 127.0.0.1:6379 when a Redis answers
// there; otherwise start a private redis-server on that port with its data
// under ./.skyq/ (append-only file on), so `skyq produce` in another terminal
// finds it at the same default address.
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { Redis } from 'ioredis';
import { errors } from '../errors.js';
import {
  REDIS_INSTALL_HINT,
  type RedisServerHandle,
  redisServerAvailable,
  startRedisServer,
} from '../redis/server.js';

const DEFAULT_PORT = 6379;

export async function redisAnswers(url: string, timeoutMs = 1000): Promise<boolean> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

export interface EmbeddedRedis {
  url: string;
  /** set when skyq started the server itself */
  server: RedisServerHandle | null;
}

export async function embeddedRedis(
  say: (line: string) => void,
  where: { port?: number; dir?: string } = {},
): Promise<EmbeddedRedis> {
  const port = where.port ?? DEFAULT_PORT;
  const url = `redis://127.0.0.1:${port}`;
  if (await redisAnswers(url)) return { url, server: null };
  if (!redisServerAvailable()) {
    throw errors.redis(`no Redis answers at ${url} and ${REDIS_INSTALL_HINT}`);
  }
  const dir = resolve(where.dir ?? '.skyq');
  mkdirSync(dir, { recursive: true });
  const server = await startRedisServer({ port, dir, appendonly: true });
  say(
    `skyq: no Redis answered at ${url}; started a private redis-server there (pid ${server.pid}, data in ${dir})`,
  );
  return { url: server.url, server };
}
