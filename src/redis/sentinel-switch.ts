// Following a Sentinel switch at once. Sentinel names the new master about 1 s into a failover,
// but a still-running old master keeps saying role:master and taking writes until Sentinel
// demotes it on its next look at it, some 10 s later, and drops its clients; its resync from
// the new master then wipes whatever it took meanwhile (acknowledged adds included). So every
// Sentinel client of skyq leaves as soon as a sentinel publishes `+switch-master` for its master:
// it reconnects, and reconnecting asks the sentinels where the master is.
//
// Why not ioredis's own `failoverDetector: true` (5.9.3), which does the same per client:
// - a switch that comes while the client is asking the sentinels (it is reconnecting, as after
//   a crashed master) ends the client for good ("Connection is closed.", status end): it calls
//   the connector's disconnect() whatever the client is doing. Here only a connected client is
//   told to reconnect; one that is connecting is asking the sentinels anyway.
// - quit() leaves its sentinel connections open (ioredis#1362): `skyq produce` never exits.
// - its connections have no error listener: a sentinel that is down prints "[ioredis]
//   Unhandled error event" for every client, every minute.
// - it costs min(sentinels, sentinelMaxConnections = 10) connections per client, some 25
//   clients per launcher (an actor has two); here one per sentinel given, per thread (a
//   launcher: one per actor thread, the coordinator's and its own), however many clients the
//   thread has, and clients of other masters on the same sentinels share them.
// A write that reaches the old master after the replica's promotion (some 0.2 s into the
// failover) and before the switch is still lost: nothing tells the client sooner.
import { Redis, type RedisOptions } from 'ioredis';

/** The switch of a master, as Sentinel publishes it on `+switch-master`. */
const CHANNEL = '+switch-master';
/** Longest pause between a watch connection's attempts to reach a sentinel that is away. */
const RETRY_MAX_MS = 2000;

interface Watch {
  /** connected clients of the masters these sentinels watch */
  clients: Set<Redis>;
  /** one subscriber per sentinel given */
  subscribers: Redis[];
}

/** By the sentinels' addresses: the clients of one thread that use them share their watch. */
const watches = new Map<string, Watch>();

const keyOf = (options: RedisOptions) =>
  (options.sentinels ?? []).map(({ host, port }) => `${host}:${port}`).join(',');

/** A client of the master Sentinel names, which follows every switch of it at once. */
export class SentinelClient extends Redis {
  constructor(options: RedisOptions) {
    super(options);
    this.on('ready', () => join(this));
    this.on('end', () => leave(this));
  }

  override disconnect(reconnect = false): void {
    // Closed by hand (ioredis emits no `end` when that happens between two attempts).
    if (!reconnect) leave(this);
    super.disconnect(reconnect);
  }

  override duplicate(override?: Partial<RedisOptions>): SentinelClient {
    return new SentinelClient({ ...this.options, ...override });
  }
}

function join(client: Redis): void {
  const key = keyOf(client.options);
  let watch = watches.get(key);
  if (!watch) {
    watch = { clients: new Set(), subscribers: [] };
    watches.set(key, watch);
    watch.subscribers = subscribe(client.options, watch);
  }
  watch.clients.add(client);
}

function leave(client: Redis): void {
  const key = keyOf(client.options);
  const watch = watches.get(key);
  if (!watch?.clients.delete(client) || watch.clients.size > 0) return;
  watches.delete(key);
  for (const subscriber of watch.subscribers) subscriber.disconnect();
}

function subscribe(options: RedisOptions, watch: Watch): Redis[] {
  const { sentinelUsername, sentinelPassword, enableTLSForSentinelMode, sentinelTLS } = options;
  return (options.sentinels ?? []).map(({ host, port }) => {
    const subscriber = new Redis({
      host,
      port,
      username: sentinelUsername ?? undefined,
      password: sentinelPassword ?? undefined,
      ...(enableTLSForSentinelMode && sentinelTLS ? { tls: sentinelTLS } : {}),
      enableReadyCheck: false,
      // The SUBSCRIBE waits for a sentinel that is away, however long; resubscribed on return.
      maxRetriesPerRequest: null,
      retryStrategy: (times) => Math.min(times * 200, RETRY_MAX_MS),
    });
    // A sentinel away is the main connection's business (it asks the others); nothing to say.
    subscriber.on('error', () => undefined);
    subscriber.subscribe(CHANNEL).catch(() => undefined);
    subscriber.on('message', (channel: string, message: string) => {
      if (channel === CHANNEL) switched(watch, message);
    });
    return subscriber;
  });
}

/** `message`: "<master> <old ip> <old port> <new ip> <new port>". */
function switched(watch: Watch, message: string): void {
  const [master, , , host, port] = message.split(' ');
  for (const client of watch.clients) {
    if (client.options.name !== master) continue;
    // Connecting (asking the sentinels) or waiting to: it finds the new master by itself.
    if (client.status !== 'ready' && client.status !== 'connect') continue;
    // Every sentinel publishes the switch as it learns it: one move per client is enough.
    const { remoteAddress, remotePort } = client.stream;
    if (remoteAddress === host && remotePort === Number(port)) continue;
    client.disconnect(true);
  }
}
