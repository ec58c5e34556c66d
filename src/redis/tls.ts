// TLS settings for Redis connections: which CA to trust and, for mTLS (Redis's
// default `tls-auth-clients yes`), the client's certificate and key. Plain data
// (PEM text or bytes), so the options can travel to actor threads as they are.
import type { ConnectionOptions } from 'node:tls';
import { errors } from '../base/errors.js';

/** A PEM text, as a string or bytes. */
export type Pem = string | Uint8Array;

/** TLS settings: the CA that signed the server, and this client's certificate and key for mTLS. */
export interface TlsOptions {
  /** PEM of the CA(s) that signed the server's certificate (default: Node's trusted CAs) */
  ca?: Pem | Pem[];
  /** PEM of this client's certificate, for servers that ask for one (mTLS) */
  cert?: Pem;
  /** PEM of the private key of `cert` */
  key?: Pem;
  /** host name to check the server's certificate against (default: the host connected to) */
  servername?: string;
  /** false skips checking the server's certificate: for tests only (default true) */
  rejectUnauthorized?: boolean;
}

const KNOWN = new Set(['ca', 'cert', 'key', 'servername', 'rejectUnauthorized']);
const isPem = (value: unknown) => typeof value === 'string' || value instanceof Uint8Array;

export function checkTls(tls: unknown): TlsOptions {
  if (typeof tls !== 'object' || tls === null || Array.isArray(tls)) {
    throw errors.invalidOption('tls', 'must be an object { ca, cert, key }', tls);
  }
  const options = tls as Record<string, unknown>;
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key)) throw errors.invalidOption(`tls.${key}`, 'unknown TLS option');
  }
  const { ca, cert, key, servername, rejectUnauthorized } = options;
  if (ca !== undefined && !isPem(ca) && !(Array.isArray(ca) && ca.every(isPem))) {
    throw errors.invalidOption('tls.ca', 'must be PEM text or bytes (or a list of them)');
  }
  for (const [name, value] of [
    ['cert', cert],
    ['key', key],
  ] as const) {
    if (value !== undefined && !isPem(value))
      throw errors.invalidOption(`tls.${name}`, 'must be PEM text or bytes');
  }
  if ((cert === undefined) !== (key === undefined)) {
    throw errors.invalidOption(
      cert === undefined ? 'tls.cert' : 'tls.key',
      'a client certificate needs both tls.cert and tls.key',
    );
  }
  if (servername !== undefined && typeof servername !== 'string')
    throw errors.invalidOption('tls.servername', 'must be a host name', servername);
  if (rejectUnauthorized !== undefined && typeof rejectUnauthorized !== 'boolean')
    throw errors.invalidOption(
      'tls.rejectUnauthorized',
      'must be true or false',
      rejectUnauthorized,
    );
  return options as TlsOptions;
}

const asBuffer = (pem: Pem): string | Buffer =>
  typeof pem === 'string' ? pem : Buffer.from(pem.buffer, pem.byteOffset, pem.byteLength);

/** What Node's tls.connect takes (bytes become Buffers again after a trip to a thread). */
export function nodeTlsOptions(tls: TlsOptions): ConnectionOptions {
  const { ca, cert, key, ...rest } = tls;
  return {
    ...rest,
    ...(ca !== undefined ? { ca: Array.isArray(ca) ? ca.map(asBuffer) : asBuffer(ca) } : {}),
    ...(cert !== undefined ? { cert: asBuffer(cert) } : {}),
    ...(key !== undefined ? { key: asBuffer(key) } : {}),
  };
}
