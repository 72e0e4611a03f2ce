import { changelogReleases, resolvePreviousRelease } from '../../../bench/drills/lib/previous-release';
import { runUpgradeDrill } from '../../../bench/drills/upgrade';

/**
 * The fast subset of `npm run drill:upgrade` that CI runs: the latest release of CHANGELOG.md
 * before HEAD (from git,
 * its node_modules linked to this checkout's rather than installed) serves jobs, batches,
 * schedules and webhooks on a private Postgres and Redis while this checkout's migrations run,
 * and keeps serving on the migrated schema to the end. The full drill (npm ci, then every
 * process rolled to the new code one at a time) takes over a minute on the reference machine,
 * most of it the new processes' start under load, so it stays an npm script.
 */
it('the latest release keeps serving while the new migrations run: no failed request, no job lost or billed twice, every event delivered', async () => {
  // The release is the latest the changelog names (not the commit before the last migration).
  const latest = resolvePreviousRelease();
  if (changelogReleases().length > 0 && !process.env.PREVIOUS_RELEASE) expect(latest?.how).toBe('changelog');
  const figures = await runUpgradeDrill({
    clients: 2,
    batchClients: 1,
    batchSize: 3,
    phaseMs: 1500,
    schedules: 6,
    install: 'link',
    roll: false,
    log: () => undefined,
  });
  expect(figures.release.sha).toBe(latest?.sha);
  expect(figures.failures).toEqual([]);
  expect(figures.byStatus['500']).toBeUndefined();
  expect(figures.submissions.abandoned).toBe(0);
  expect(figures.deaths).toEqual([]);
  expect(figures.steps.map((s) => s.step)).toEqual([
    `migrations (${figures.migrationsApplied.length})`,
    `contract: counters reconciled (${figures.countersMended.length} mended)`,
  ]);
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
