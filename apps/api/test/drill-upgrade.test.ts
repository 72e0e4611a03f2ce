import { runUpgradeDrill } from '../../../bench/drills/upgrade';

/**
 * The fast subset of `npm run drill:upgrade` that CI runs: the previous release (from git,
 * its node_modules linked to this checkout's rather than installed) serves jobs, batches,
 * schedules and webhooks on a private Postgres and Redis while this checkout's migrations run,
 * and keeps serving on the migrated schema to the end. The full drill (npm ci, then every
 * process rolled to the new code one at a time) takes over a minute on the reference machine,
 * most of it the new processes' start under load, so it stays an npm script.
 */
it('the previous release keeps serving while the new migrations run: no failed request, no job lost or billed twice, every event delivered', async () => {
  const figures = await runUpgradeDrill({ clients: 2, batchClients: 1, batchSize: 3, phaseMs: 1500, schedules: 6, install: 'link', roll: false, log: () => undefined });
  expect(figures.failures).toEqual([]);
  expect(figures.deaths).toEqual([]);
  expect(figures.steps.map((s) => s.step)).toEqual([`migrations (${figures.migrationsApplied.length})`]);
  expect(Object.keys(figures.byStatus).filter((status) => !['200', '201', '202', '503'].includes(status))).toEqual([]);
  expect(figures.byPhase.migrated?.['202']).toBeGreaterThan(0);
  expect(figures.submissions.jobs).toBeGreaterThan(0);
  expect(figures.submissions.batches).toBeGreaterThan(0);
  expect(figures.jobs.lost).toBe(0);
  expect(figures.jobs.completed).toBe(figures.jobs.total);
  expect(figures.audit.problems).toEqual([]);
  expect(figures.schedules.dispatchedOnce).toBe(figures.schedules.due);
  expect(figures.webhooks.events).toBeGreaterThan(0);
  expect(figures.webhooks.missing).toBe(0);
}, 180_000);
