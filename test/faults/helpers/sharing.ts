/**
 * How the fault files share the machine (two-at-a-time.ts): most run two at a time, since they
 * mostly wait on Redis, on failovers and on the processes they kill (the suite kept about 43 %
 * of the two cores busy with its files one at a time), and their checks count ids, not time.
 */

/**
 * Files that run beside all the others, holding no slot: they mostly wait. The long-lived
 * clients' file sleeps through a 6 s and a 2-minute restart of Redis, and times its clients only
 * once Redis answers again, within a 2 s bound they meet in about 1 s.
 */
export const BESIDE = ['test/faults/long-lived-clients.test.ts'];

/**
 * Files that hold both slots: each checks a time a neighbour's CPU would stretch. SLOWLOG's
 * 10 ms a script call, the raw ZADD's p99 of 100 ms after a failover, the Sentinel switch left
 * within 1 s, the reshard's recovery within 2 s (a CLI started in it), and a handler filling its
 * heap, which must run out of memory before 2 s without a heartbeat call it hung (beside another
 * file, its collections took longer once, and it was restarted as hung).
 */
export const ALONE = [
  'test/faults/slowlog.test.ts',
  'test/faults/sentinel-tracking.test.ts',
  'test/faults/sentinel-switch.test.ts',
  'test/faults/cluster-reshard.test.ts',
  'test/faults/handler-faults.test.ts',
];

/** The list this test file is named in, by the path vitest ran it from. */
export const listed = (list: string[], path: string | undefined): boolean =>
  list.some((file) => path?.endsWith(file) === true);
