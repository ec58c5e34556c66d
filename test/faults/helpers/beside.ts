/**
 * The fault files that run beside the others (one-at-a-time.ts): they mostly wait. Only the
 * long-lived clients' file does: it sleeps through a 6 s and a 2-minute restart of Redis, and
 * times its clients only once Redis answers again, within a 2 s bound they meet in about 1 s.
 */
export const BESIDE = ['test/faults/long-lived-clients.test.ts'];
