import { runRedisFailoverDrill } from '../../../bench/drills/redis-failover';

/**
 * The fast subset of `npm run drill:redis-failover`: on a private six-node Redis Cluster, the
 * master of the queues' slot is killed while jobs are submitted and two worker processes run
 * them; its replica takes over. No process dies, no answer but 200, 202 or 503 (with
 * Retry-After), every submission is accepted, every accepted job completes, none is lost or
 * made twice, and the ledger is exact (each job billed once).
 */
it('a Redis Cluster master killed under load: failover, no job lost, none billed twice', async () => {
  const figures = await runRedisFailoverDrill({ rate: 10, beforeMs: 2500, afterMs: 2500, workers: 2, log: () => undefined });
  expect(figures.failures).toEqual([]);
  expect(figures.deaths).toEqual([]);
  expect(figures.killed.replicaPort).toBeGreaterThan(0);
  expect(figures.submissions.accepted).toBe(figures.submissions.sent);
  expect(figures.submissions.sent).toBeGreaterThan(20);
  expect(figures.lostJobs).toBe(0);
  expect(figures.untoldJobs).toBe(0);
  expect(figures.audit.problems).toEqual([]);
  expect(figures.audit.completed).toBe(figures.submissions.accepted);
  expect(figures.killToFirstAcceptedMs).not.toBeNull();
}, 120_000);
