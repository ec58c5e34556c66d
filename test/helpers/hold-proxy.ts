/**
 * A TCP hop between clients and a real redis-server that can hold one reply back: armed, the
 * next request of a named connection (CLIENT SETNAME, as skyq names each of its connections)
 * that contains a given command goes through to Redis, which runs it, and everything Redis
 * answers on that connection waits in the proxy until release(). That puts a client exactly
 * between "Redis ran my command" and "I read its reply", made exact instead of left to timing.
 * It also tells when a named connection next gets a reply, so a test can wait on another
 * client's round trip.
 */
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';

export interface HoldProxy {
  url: string;
  /**
   * The next request on a connection named `connection` that contains `command` (a command
   * name, "evalsha") and `marker` (any text, a key name) runs; resolves once Redis answered it,
   * with that answer held until release().
   */
  holdReplyTo(connection: string, command: string, marker: string): Promise<void>;
  /** Lets the held reply (and what came after it on that connection) through. */
  release(): void;
  /** Resolves when a connection named `connection` next receives anything from Redis. */
  nextReply(connection: string): Promise<void>;
  close(): Promise<void>;
}

interface Hold {
  connection: string;
  command: string;
  marker: string;
  answered: () => void;
}

export async function startHoldProxy(redisPort: number): Promise<HoldProxy> {
  let armed: Hold | null = null;
  let releaseHeld: (() => void) | null = null;
  const waiters: { connection: string; resolve: () => void }[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = tcpConnect(redisPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    let name = '';
    /** set while this connection's replies are held: the bytes waiting */
    let held: Buffer[] | null = null;
    let holdNext: (() => void) | null = null;
    client.on('data', (chunk: Buffer) => {
      const text = chunk.toString('latin1');
      // ioredis names the connection first thing: CLIENT SETNAME <name> as RESP bulk strings.
      const setName = /\r\nsetname\r\n\$\d+\r\n([^\r]*)\r\n/i.exec(text);
      if (setName) name = setName[1] as string;
      const hold = armed;
      if (
        hold &&
        name === hold.connection &&
        text.toLowerCase().includes(`\r\n${hold.command}\r\n`) &&
        text.includes(hold.marker)
      ) {
        armed = null;
        holdNext = hold.answered;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      for (const waiter of waiters.filter((w) => w.connection === name)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        // After this chunk is handed on: the client may read it from now on.
        setImmediate(waiter.resolve);
      }
      if (holdNext) {
        const answered = holdNext;
        holdNext = null;
        held = [];
        releaseHeld = () => {
          const bytes = held ?? [];
          held = null;
          for (const part of bytes) client.write(part);
        };
        answered();
      }
      if (held) held.push(chunk);
      else client.write(chunk);
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
    holdReplyTo: (connection, command, marker) =>
      new Promise<void>((answered) => {
        armed = { connection, command: command.toLowerCase(), marker, answered };
      }),
    release: () => {
      const release = releaseHeld;
      releaseHeld = null;
      release?.();
    },
    nextReply: (connection) =>
      new Promise<void>((resolve) => {
        waiters.push({ connection, resolve });
      }),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
