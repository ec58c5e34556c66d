// Where the HTTP server listens: `--http` alone, `--http 9464`, `--http host:port`,
// `--http [::1]:9464`. Loopback is the default; anything else needs a token (policy.ts).
import { isIP } from 'node:net';
import { errors } from '../base/errors.js';

export const DEFAULT_HTTP_HOST = '127.0.0.1';
/** the port Prometheus exporters of this kind commonly take */
export const DEFAULT_HTTP_PORT = 9464;

/** Where the HTTP server listens. */
export interface ListenAddress {
  /** an address of this machine (127.0.0.1, ::1, 0.0.0.0) or a name */
  host: string;
  /** the TCP port; 0 lets the system pick a free one */
  port: number;
}

/** `true` (a bare flag) means the default address; port 0 lets the system choose. */
export function parseListenAddress(
  text: string | true,
  field = 'http',
  defaultPort = DEFAULT_HTTP_PORT,
): ListenAddress {
  if (text === true) return { host: DEFAULT_HTTP_HOST, port: defaultPort };
  const value = text.trim();
  const expected = 'expected host:port, host, or port (e.g. 127.0.0.1:9464)';
  if (/^\d+$/.test(value)) return { host: DEFAULT_HTTP_HOST, port: checkPort(field, value) };
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(value);
  if (bracketed) {
    const host = bracketed[1] as string;
    if (isIP(host) !== 6) throw errors.invalidOption(field, expected, text);
    return { host, port: bracketed[2] ? checkPort(field, bracketed[2]) : defaultPort };
  }
  const colons = value.split(':').length - 1;
  // ":9464" means "every interface" to some tools and "loopback" to others: make the user say.
  if (value.startsWith(':') || value === '' || colons > 1) {
    throw errors.invalidOption(field, `${expected}; write IPv6 hosts as [::1]:9464`, text);
  }
  const [host, port] = value.split(':') as [string, string | undefined];
  if (!/^[A-Za-z0-9.-]+$/.test(host)) throw errors.invalidOption(field, expected, text);
  return { host, port: port === undefined ? defaultPort : checkPort(field, port) };
}

function checkPort(field: string, text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535) {
    throw errors.invalidOption(field, 'port must be a number from 0 to 65535', text);
  }
  return port;
}

/** Only this machine can reach it: 127.0.0.0/8, ::1 and localhost. */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase().replace(/^\[|\]$/g, '');
  if (name === 'localhost' || name === '::1') return true;
  return isIP(name) === 4 && name.startsWith('127.');
}

/** The URL a person types to reach the server. */
export function urlOf(address: ListenAddress): string {
  const host = isIP(address.host) === 6 ? `[${address.host}]` : address.host;
  return `http://${host}:${address.port}/`;
}
