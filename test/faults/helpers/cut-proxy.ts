/**
 * A TCP hop between a client and a real redis-server that can lose one reply: armed, it lets
 * the next request that contains a given command through to Redis (which applies it), then
 * drops Redis's answer and closes the client's connection. That is what a client sees when
 * Redis is killed, or the network cut, between applying a command and answering it, made
 * exact instead of left to the timing of a kill -9.
 */
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';

export interface CutProxy {
  url: string;
  /**
   * The next reply to a command whose name starts with `command` ("eval": EVAL, EVALSHA) is
   * lost. The connection closes at once, or after `closeAfterMs` (replies dropped meanwhile):
   * long enough for a client's command timeout to fail the call before it can resend it.
   * `skip`: let that many such requests through first (an add reserves its ids by a script
   * call before add.lua's).
   */
  cutReplyTo(command: string, closeAfterMs?: number, skip?: number): void;
  /** replies lost so far */
  cuts(): number;
  close(): Promise<void>;
}

export async function startCutProxy(redisPort: number): Promise<CutProxy> {
  let armed: string | null = null;
  let skipping = 0;
  let closeAfter = 0;
  let cuts = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = tcpConnect(redisPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    let cutNext = false;
    let dropping = false;
    client.on('data', (chunk: Buffer) => {
      // The command name comes as a RESP bulk string right after a line end.
      if (armed && chunk.toString('latin1').toLowerCase().includes(`\r\n${armed}`)) {
        if (skipping > 0) skipping--;
        else {
          armed = null;
          cutNext = true;
        }
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (dropping) return;
      if (!cutNext) {
        client.write(chunk);
        return;
      }
      cuts++;
      dropping = true;
      setTimeout(() => {
        client.destroy();
        upstream.destroy();
      }, closeAfter);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    cutReplyTo: (command, closeAfterMs = 0, skip = 0) => {
      armed = command.toLowerCase();
      skipping = skip;
      closeAfter = closeAfterMs;
    },
    cuts: () => cuts,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
