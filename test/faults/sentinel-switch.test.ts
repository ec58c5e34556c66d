/**
 * Acknowledged adds kept across a SENTINEL FAILOVER whose old master stays up. Sentinel names
 * the new master about 1 s after the command but demotes the old one (and drops its clients)
 * only some 10 s later, on its next look at it; until then the old master still says
 * role:master and takes writes, and whatever it took after the switch is wiped when it resyncs
 * from the new one. Messages due at once are consumed inside that window (the loss does not
 * show, sentinel-failover.test.ts); messages due later do not. So: a long-lived `Queue` and a
 * `skyq produce` reading stdin, both through the sentinels, add messages due in 10 minutes, one
 * every ADD_EVERY_MS each, before, during and after the failover, while the actors run (their
 * connections must move too). Once the old master is a replica again and in sync, every
 * acknowledged id is looked up on the new master: 0 lost, and every skyq connection has left
 * the old master within LEAVE_MS of Sentinel naming the new one.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from '../../src/index.js';
import type { Launcher } from '../../src/runtime/launcher.js';
import { startActors } from '../../src/start.js';
import { removeTempDirs, spawnCli, tempDir, waitFor } from '../helpers/runtime.js';
import { startFlow } from './helpers/flow.js';
import { MASTER_NAME, type SentinelSetup, startSentinels } from './helpers/sentinel.js';

const PREFIX = 'sw';
const GROUPS = 4;
const ADD_EVERY_MS = 50;
/** Far enough ahead that nothing added here is consumed during the test. */
const DELAY_MS = 10 * 60_000;
/** From Sentinel naming the new master to no skyq connection left on the old one. */
const LEAVE_MS = 3000;

let setup: SentinelSetup;

beforeAll(async () => {
  setup = await startSentinels();
});

afterAll(async () => {
  await setup?.stop();
  removeTempDirs();
});

/** A plain connection to one of the setup's servers (not through the sentinels). */
function direct(port: number): Redis {
  const client = new Redis({ host: '127.0.0.1', port, password: setup.password });
  client.on('error', () => undefined);
  return client;
}

/** skyq's connections to a server (every client skyq makes is named skyq…). */
async function skyqClients(client: Redis): Promise<number> {
  const list = (await client.client('LIST')) as string;
  return list.split('\n').filter((line) => / name=skyq/.test(line)).length;
}

describe('Sentinel switch with the old master alive', () => {
  it('adds acknowledged before, during and after the switch are all on the new master', async () => {
    const sentinel = {
      nodes: setup.sentinels,
      master: MASTER_NAME,
      password: setup.password,
      sentinelPassword: setup.sentinelPassword,
    };
    const where = { sentinel, prefix: PREFIX, groups: GROUPS };
    const queue = new Queue(where);
    const nodes = setup.sentinels.map((s) => `${s.host}:${s.port}`).join(',');
    const cli = spawnCli(
      [
        ...['produce', '--sentinel', nodes, '--sentinel-master', MASTER_NAME],
        ...['--prefix', PREFIX, '--groups', String(GROUPS), '--delay', '10m'],
      ],
      { SKYQ_REDIS_PASSWORD: setup.password, SKYQ_SENTINEL_PASSWORD: setup.sentinelPassword },
    );
    const cliIds = () => [...cli.stdout().matchAll(/^added (\S+)$/gm)].map((m) => m[1] as string);
    let lines = 0;
    const feeder = setInterval(() => cli.child.stdin?.write(`line ${++lines}\n`), ADD_EVERY_MS);
    const oldMaster = direct(setup.master.port);
    const newMaster = direct(setup.replica.port);
    const onNew = new Queue({ connection: newMaster, prefix: PREFIX, groups: GROUPS });
    let launcher: Launcher | undefined;
    try {
      await queue.ready();
      launcher = await startActors({ ...where, logDir: tempDir(), publishStats: false });
      const flow = startFlow(queue, { batch: 1, everyMs: ADD_EVERY_MS, delayMs: DELAY_MS });
      await sleep(1500);
      expect(flow.acked.length).toBeGreaterThan(0);
      expect(cliIds().length).toBeGreaterThan(0);
      expect(await skyqClients(oldMaster)).toBeGreaterThan(0);

      const faultAt = Date.now();
      await setup.ask('SENTINEL', 'FAILOVER', MASTER_NAME);
      let switchedAt = Number.POSITIVE_INFINITY;
      let leftAt = Number.POSITIVE_INFINITY;
      // Over once the old master replicates the new one: what it took meanwhile is gone.
      const syncedAt = await waitFor(
        'the old master to be a replica of the new one, in sync',
        async () => {
          const now = Date.now();
          if (switchedAt === Number.POSITIVE_INFINITY) {
            if ((await setup.masterPort()) === setup.replica.port) switchedAt = now;
          } else if (leftAt === Number.POSITIVE_INFINITY && (await skyqClients(oldMaster)) === 0)
            leftAt = now;
          const info = await oldMaster.info('replication');
          return /role:slave/.test(info) && /master_link_status:up/.test(info) ? now : undefined;
        },
        60_000,
        20,
      );
      await sleep(1500);
      await flow.stop();
      clearInterval(feeder);
      cli.child.stdin?.end('quit\n');
      const ended = await cli.done;

      const acked = [
        ...flow.acked.map((id, i) => ({ id, at: flow.ackedAt[i] as number })),
        ...cliIds().map((id) => ({ id, at: Number.NaN })),
      ];
      const lost: { id: string; at: number }[] = [];
      for (const add of acked) if ((await onNew.get(add.id)) === null) lost.push(add);
      const since = (at: number) => (Number.isFinite(at) ? at - faultAt : null);
      const lostAt = lost.map(({ at }) => at).filter(Number.isFinite);
      const figures = {
        switchMs: since(switchedAt),
        leftMs: since(leftAt),
        syncedMs: since(syncedAt),
        acked: acked.length,
        cliAcked: cliIds().length,
        lost: lost.length,
        cliLost: lost.filter(({ at }) => Number.isNaN(at)).length,
        lostFromMs: lostAt.length > 0 ? since(Math.min(...lostAt)) : null,
        lostToMs: lostAt.length > 0 ? since(Math.max(...lostAt)) : null,
      };
      console.log(`sentinel switch: ${JSON.stringify(figures)}`);
      expect(ended.stderr).not.toContain(setup.password);
      expect(ended.stderr).not.toContain(setup.sentinelPassword);
      const some = lost.slice(0, 5).map(({ id }) => id);
      expect(lost.length, `acknowledged adds lost, e.g. ${some.join(' ')}`).toBe(0);
      expect(leftAt - switchedAt).toBeLessThan(LEAVE_MS);
    } finally {
      clearInterval(feeder);
      cli.child.kill('SIGKILL');
      await launcher?.stop(1000);
      await queue.close();
      await onNew.close();
      oldMaster.disconnect();
      newMaster.disconnect();
    }
  });
});
