import { runPostgresRestartDrill } from '../../../bench/drills/postgres-restart';

/**
 * The fast subset of `npm run drill:postgres` that CI runs: one restart (a fast shutdown, whose
 * sessions end with 57P01) under load, against a private Postgres and Redis. The full drill
 * runs ten, alternating fast and immediate shutdowns.
 */
it('Postgres restarted under load: no process dies, 503s during the fault, back within 5 s, ledger exact', async () => {
  const figures = await runPostgresRestartDrill({
    rounds: 1,
    clients: 4,
    gapMs: 1500,
    downMs: 1000,
    recoveryTargetMs: 5000,
    log: () => undefined,
  });
  expect(figures.failures).toEqual([]);
  expect(figures.deaths).toEqual([]);
  expect(figures.rounds[0].statuses['503']).toBeGreaterThan(0);
  expect(figures.audit.problems).toEqual([]);
  expect(figures.audit.active).toBe(0);
  // Every job is one a client was answered for, or one a due schedule dispatched.
  expect(figures.audit.jobs + figures.audit.cached).toBe(figures.submissions.accepted + figures.schedules.due);
  expect(figures.schedules.dispatchedOnce).toBe(figures.schedules.due);
  expect(figures.submissions.accepted).toBeGreaterThan(0);
}, 180_000);
