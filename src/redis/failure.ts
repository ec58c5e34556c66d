// Why a connection to Redis failed, in a few readable words, and which errors
// mean "the connection is gone" (rather than "Redis answered no"). ioredis
// reports an outage as socket errors on the client and as generic rejections
// ("Connection is closed.") on the commands; the first carries the reason.

import { connect } from 'node:net';

interface CodedError extends Error {
  code?: string;
}

const TRUST_HINT = 'give the CA that signed it (tls.ca, --tls-ca or SKYQ_TLS_CA)';
const UNTRUSTED = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
]);

const BY_CODE: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found (DNS lookup failed)',
  ETIMEDOUT: 'no answer: connecting timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EPIPE: 'connection closed by the server',
  CERT_HAS_EXPIRED: "TLS: the server's certificate has expired",
  ERR_TLS_CERT_ALTNAME_INVALID: "TLS: the server's certificate does not name this host",
  ERR_SSL_WRONG_VERSION_NUMBER:
    'TLS handshake failed: is this a TLS port? (plain ports want redis://)',
  ERR_SSL_PACKET_LENGTH_TOO_LONG:
    'TLS handshake failed: is this a TLS port? (plain ports want redis://)',
};

/**
 * A short, readable reason for a connection error (socket, TLS or AUTH). `tls`
 * says whether the connection used TLS, for a hint when the cause may be a
 * mismatch (a plain client on a TLS port, a server that wants a client certificate).
 */
export function describeConnectionError(error: unknown, tls?: boolean): string {
  const reason = reasonOf(error);
  if (tls === undefined) return reason;
  if (reason === 'connection reset')
    return tls
      ? 'connection reset (does the server want a client certificate? give tls.cert and tls.key, --tls-cert and --tls-key)'
      : 'connection reset (a TLS port? use rediss:// or --tls-ca)';
  if (tls && reason === 'no answer: connecting timed out')
    return 'no answer: connecting timed out (TLS to a port without TLS? use redis://)';
  return reason;
}

function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const { code = '', message } = error as CodedError;
  if (UNTRUSTED.has(code))
    return `TLS: the server's certificate is not trusted (${message}): ${TRUST_HINT}`;
  const known = BY_CODE[code];
  if (known) return known;
  if (
    /certificate required|alert (bad|unknown) certificate|peer did not return a certificate/i.test(
      message,
    )
  )
    return 'TLS: the server wants a client certificate it trusts: give tls.cert and tls.key (--tls-cert, --tls-key)';
  if (/^WRONGPASS/.test(message)) return 'wrong user name or password';
  if (/NOAUTH/.test(message))
    return 'it asks for a password: give one in the URL (user:password@ before the host)';
  if (/^Command timed out/.test(message)) return 'no answer: a command timed out';
  if (/connect ETIMEDOUT|timed? ?out/i.test(message)) return 'no answer: connecting timed out';
  if (/^Ready check failed: /.test(message)) return reasonOf(new Error(message.slice(20)));
  if (CLUSTER_GONE.test(message))
    return 'a master of the cluster is gone, and no replica took over yet';
  return message.split('\n')[0] ?? message;
}

/**
 * A cluster with a master gone: ioredis follows the slot to no one until its replica is promoted
 * (`Too many Cluster redirections. Last error: Error: Connection is closed.`), or Redis says the
 * cluster is down. No connection serves those slots, as for a standalone server that went away.
 */
const CLUSTER_GONE =
  /^(CLUSTERDOWN|Too many Cluster redirections\. Last error: (Error: Connection is closed|ReplyError: CLUSTERDOWN|Error: Stream isn't writeable))/;

/**
 * True for the rejections ioredis gives commands when it has no connection
 * (closed, gave up retrying, offline, timed out, no cluster node), as opposed
 * to a reply from Redis.
 */
export function isConnectionLoss(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'MaxRetriesPerRequestError') return true;
  if (CLUSTER_GONE.test(error.message)) return true;
  return /^(Connection is closed|Stream isn't writeable|Cluster isn't ready|Command timed out|None of startup nodes is available|Failed to refresh slots cache|connect E[A-Z]+)/.test(
    error.message,
  );
}

/** The error a plain TCP connect to host:port gets (null when it connects). */
export function socketError(host: string, port: number, timeoutMs: number): Promise<Error | null> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (error: Error | null) => {
      socket.destroy();
      resolve(error);
    };
    socket.setTimeout(timeoutMs, () =>
      done(Object.assign(new Error(`connect ETIMEDOUT ${host}:${port}`), { code: 'ETIMEDOUT' })),
    );
    socket.once('connect', () => done(null));
    socket.once('error', done);
  });
}

/** WRONGPASS (bad user or password) or NOAUTH (a password is wanted). */
export function isLoginRefused(error: unknown): error is Error {
  return (
    error instanceof Error && /^(Ready check failed: )?(WRONGPASS|NOAUTH)\b/.test(error.message)
  );
}
