// startActors(): the actor runtime, and beside it, when asked, the HTTP server. The
// composition lives here, above both, so that runtime/ knows nothing of HTTP.
import { checkHttpOptions, type HttpOptions, serveLauncher } from './http/index.js';
import { launchActors } from './runtime/launch.js';
import type { Launcher, RuntimeOptions } from './runtime/launcher.js';
import { planStart } from './runtime/start-options.js';

export interface StartOptions extends RuntimeOptions {
  /** serve /metrics, /healthz and the dashboard (src/http); off by default */
  http?: HttpOptions;
}

/**
 * Throws the SkyqError startActors() would throw for these options, without connecting or
 * starting anything: the CLI checks every flag before it starts an embedded server.
 */
export function checkStartOptions(options: StartOptions): void {
  const { http, ...runtime } = options;
  if (http) checkHttpOptions(http);
  planStart(runtime);
}

/** Resolves when every actor said it is ready and the HTTP server (if any) listens. */
export async function startActors(options: StartOptions = {}): Promise<Launcher> {
  const { http, ...runtime } = options;
  if (http) checkHttpOptions(http);
  const launcher = await launchActors(runtime);
  if (!http) return launcher;
  try {
    launcher.http = await serveLauncher(launcher, launcher.queueOptions, http);
  } catch (error) {
    await launcher.stop(0);
    throw error;
  }
  return launcher;
}
