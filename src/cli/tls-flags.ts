// --tls-ca, --tls-cert, --tls-key (or SKYQ_TLS_CA, SKYQ_TLS_CERT, SKYQ_TLS_KEY):
// files read here, so the connection gets their PEM text and a missing file is
// named at once instead of failing deep inside a TLS handshake.
import { readFileSync } from 'node:fs';
import { errors } from '../base/errors.js';
import { checkTls, type TlsOptions } from '../redis/tls.js';

export interface TlsFlags {
  tlsCa?: string;
  tlsCert?: string;
  tlsKey?: string;
}

const FILES = [
  ['ca', 'tlsCa', 'tls-ca', 'SKYQ_TLS_CA'],
  ['cert', 'tlsCert', 'tls-cert', 'SKYQ_TLS_CERT'],
  ['key', 'tlsKey', 'tls-key', 'SKYQ_TLS_KEY'],
] as const;

/** TLS options from flags or env, or undefined when none is given. */
export function tlsFromFlags(flags: TlsFlags): TlsOptions | undefined {
  const tls: TlsOptions = {};
  for (const [field, flag, name, env] of FILES) {
    const path = flags[flag] ?? (process.env[env] || undefined);
    if (path === undefined) continue;
    try {
      tls[field] = readFileSync(path, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw errors.invalidOption(`--${name}`, `cannot read the file (${code})`, path);
    }
  }
  if (Object.keys(tls).length === 0) return undefined;
  if ((tls.cert === undefined) !== (tls.key === undefined))
    throw errors.invalidOption(
      tls.cert === undefined ? '--tls-cert' : '--tls-key',
      'a client certificate needs both --tls-cert and --tls-key',
    );
  return checkTls(tls);
}
