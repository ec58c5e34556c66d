/**
 * A Redis Cluster with a replica per master, for failover: the 3-master cluster of
 * src/redis/server.ts, then one more cluster-enabled redis-server per master, introduced with
 * CLUSTER MEET and attached with CLUSTER REPLICATE. A small cluster-node-timeout makes a failed
 * master's replica take over within seconds.
 */
import { Redis } from 'ioredis';
import { waitFor } from '../../helpers/queue.js';
import { type RedisServerHandle, startCluster, startStandalone } from '../../helpers/redis.js';

export interface ClusterNodeInfo {
  host: string;
  port: number;
  pid: number;
  /** CLUSTER MYID */
  id: string;
}

export interface ReplicatedCluster {
  masters: ClusterNodeInfo[];
  /** replicas[i] replicates masters[i] */
  replicas: ClusterNodeInfo[];
  /** every node, as seeds for a client */
  seeds: { host: string; port: number }[];
  stop(): Promise<void>;
}

const plain = (port: number) =>
  new Redis({ host: '127.0.0.1', port, lazyConnect: true, retryStrategy: () => null });

async function describeNode(port: number): Promise<ClusterNodeInfo> {
  const client = plain(port);
  client.on('error', () => undefined);
  try {
    const info = (await client.info('server')) as string;
    const pid = Number(/process_id:(\d+)/.exec(info)?.[1]);
    const id = String(await client.call('CLUSTER', 'MYID'));
    return { host: '127.0.0.1', port, pid, id };
  } finally {
    client.disconnect();
  }
}

/** Runs `fn` with a short-lived client on `port`. */
export async function onNode<T>(port: number, fn: (client: Redis) => Promise<T>): Promise<T> {
  const client = plain(port);
  client.on('error', () => undefined);
  try {
    return await fn(client);
  } finally {
    client.disconnect();
  }
}

export async function startReplicatedCluster(nodeTimeoutMs = 1000): Promise<ReplicatedCluster> {
  const base = await startCluster();
  const replicaServers: RedisServerHandle[] = [];
  const stop = async () => {
    await Promise.all(replicaServers.map((s) => s.stop()));
    await base.stop();
  };
  try {
    const timeout = ['--cluster-node-timeout', String(nodeTimeoutMs)];
    for (let i = 0; i < base.nodes.length; i++) {
      // Always allowed to take over, however long it lost sight of its master (a busy machine).
      const args = [...timeout, '--cluster-replica-validity-factor', '0'];
      replicaServers.push(await startStandalone({ cluster: true, extraArgs: args }));
    }
    const masters = await Promise.all(base.nodes.map((n) => describeNode(n.port)));
    const replicas = await Promise.all(replicaServers.map((s) => describeNode(s.port)));
    for (const master of masters) {
      await onNode(master.port, async (c) => {
        await c.call('CONFIG', 'SET', 'cluster-node-timeout', String(nodeTimeoutMs));
        await c.call('CONFIG', 'SET', 'repl-diskless-sync-delay', '0'); // sync replicas at once
      });
    }
    await Promise.all(
      replicas.map((replica, i) =>
        onNode(replica.port, async (c) => {
          const master = masters[i] as ClusterNodeInfo;
          await c.call('CLUSTER', 'MEET', master.host, master.port);
          await waitFor(`node ${replica.port} to learn of ${master.port}`, async () =>
            String(await c.call('CLUSTER', 'NODES')).includes(master.id) ? true : undefined,
          );
          await c.call('CLUSTER', 'REPLICATE', master.id);
        }),
      ),
    );
    const all = [...masters, ...replicas];
    await waitFor(
      'every replica in sync and every node seeing 6 nodes',
      async () => {
        const states = await Promise.all(
          all.map((n) =>
            onNode(n.port, async (c) => [await c.info('replication'), await c.cluster('INFO')]),
          ),
        );
        const ok = states.every(([replication, cluster], i) => {
          const text = `${replication}\n${cluster}`;
          const role = i < masters.length ? /connected_slaves:1/ : /master_link_status:up/;
          return role.test(text) && /cluster_state:ok/.test(text) && /known_nodes:6/.test(text);
        });
        return ok ? true : undefined;
      },
      30_000,
      100,
    );
    return { masters, replicas, seeds: all.map(({ host, port }) => ({ host, port })), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
