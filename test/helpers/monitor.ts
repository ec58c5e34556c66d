// MONITOR on a plain socket: ioredis's monitor() can lose track of its replies when the
// server is busy as it starts (a clean-clone run failed with "Command queue state error").
import { createHash } from 'node:crypto';
import { connect as tcpConnect } from 'node:net';

export const sha = (text: string) => createHash('sha1').update(text).digest('hex');

/** Calls `onLine` with each command the server at `url` runs, until the returned stop(). */
export function monitor(url: string, onLine: (line: string) => void): { stop: () => void } {
  const socket = tcpConnect(Number(new URL(url).port), '127.0.0.1');
  let rest = '';
  socket.setEncoding('latin1').on('data', (chunk: string) => {
    const lines = (rest + chunk).split('\r\n');
    rest = lines.pop() ?? '';
    for (const line of lines) onLine(line);
  });
  socket.write('MONITOR\r\n');
  return { stop: () => socket.destroy() };
}

/** How many EVALSHA calls of the script `sha1` the server runs over `ms`. */
export async function countEvalsha(url: string, sha1: string, ms: number): Promise<number> {
  let calls = 0;
  const watch = monitor(url, (line) => {
    if (/"evalsha" "([0-9a-f]{40})"/i.exec(line)?.[1] === sha1) calls++;
  });
  await new Promise((resolve) => setTimeout(resolve, ms));
  watch.stop();
  return calls;
}
