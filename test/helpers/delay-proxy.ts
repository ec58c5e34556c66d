/**
 * A TCP hop to a real redis-server that hands on everything Redis answers `replyDelayMs` late,
 * in order: a Redis that far away, as a cloud Redis a few ms off is, made larger and exact.
 * What clients send goes through at once.
 */
import { createServer, type Socket, connect as tcpConnect } from 'node:net';

export interface DelayProxy {
  url: string;
  close(): Promise<void>;
}

export async function startDelayProxy(
  redisPort: number,
  replyDelayMs: number,
): Promise<DelayProxy> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = tcpConnect(redisPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.on('data', (chunk: Buffer) => upstream.write(chunk));
    // Timers of one length fire in the order they were set: the bytes keep their order.
    upstream.on('data', (chunk: Buffer) => {
      setTimeout(() => {
        if (!client.destroyed) client.write(chunk);
      }, replyDelayMs);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no proxy port');
  return {
    url: `redis://127.0.0.1:${address.port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
