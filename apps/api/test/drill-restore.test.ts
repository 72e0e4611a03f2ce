import { runRestoreDrill } from '../../../bench/drills/restore';

/**
 * The fast subset of `npm run drill:restore`: a base backup under light load, a named restore
 * point, a restore into a second cluster, and the service started on it with an empty Redis
 * (private Postgres clusters and Redis servers; never the shared ones). The full drill runs more
 * clients and longer gaps.
 */
it('restored to a point in time with an empty Redis: in-flight jobs re-queued and finished, nothing lost before the point, nothing unknown charged, ledger exact', async () => {
  const f = await runRestoreDrill({ clients: 2, gapMs: 1500, log: () => undefined });
  expect(f.failures).toEqual([]);
  expect(f.missingFromRestore).toBe(0);
  expect(f.unknownInRestore).toBe(0);
  expect(f.accepted.afterRestorePoint).toBeGreaterThan(0);
  expect(f.restored.queued + f.restored.running).toBeGreaterThan(0);
  expect(f.inFlightFinished).toBe(f.restored.queued + f.restored.running);
  expect(f.settledRerun).toBe(0);
  expect(f.strangers.entries).toBeGreaterThan(0);
  expect(f.strangers).toMatchObject({ rows: 0, ledger: 0 });
  expect(f.orphanLedger).toBe(0);
  expect(f.lostAnswered404.notFound).toBe(f.lostAnswered404.asked);
  expect(f.audit.problems).toEqual([]);
  expect(f.audit.active).toBe(0);
  expect(f.audit.jobs + f.audit.cached).toBe(f.restored.jobs);
}, 120_000);
