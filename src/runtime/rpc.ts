// The one place that speaks comlink. Calls between the launcher, the
// coordinator and the actors go through here, each with a time limit so a
// stuck thread shows up as a timeout instead of hanging its caller.
import * as Comlink from 'comlink/dist/esm/comlink.mjs';
import nodeEndpoint, { type NodeEndpoint } from 'comlink/dist/esm/node-adapter.mjs';
import { errors } from '../base/errors.js';

export type Remote<T> = Comlink.Remote<T>;

/** Serve `api` to whoever holds the other end of `port`. */
export function serve(api: object, port: NodeEndpoint): void {
  Comlink.expose(api, nodeEndpoint(port));
}

/** A proxy for the api served at the other end of `port`. */
export function remote<T>(port: NodeEndpoint): Remote<T> {
  return Comlink.wrap<T>(nodeEndpoint(port));
}

/** Lets the proxy's port go, so the thread can exit. */
export function release(proxy: Remote<unknown>): void {
  proxy[Comlink.releaseProxy]();
}

/** Transfers a MessagePort along with a call instead of copying it. */
export function transferPort<T extends object>(port: T): T {
  return Comlink.transfer(port, [port] as never);
}

export async function withTimeout<T>(call: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(errors.timeout(what, ms)), ms);
  });
  try {
    return await Promise.race([call, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
