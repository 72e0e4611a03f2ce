import { loadConfig } from '@sdx/config';
import { createRuntime, onShutdown, startProcessMetrics, untilDependenciesReady } from '@sdx/runtime';
import { startScheduler } from '@sdx/scheduler-engine';
import { startPlanGrace } from './plan-grace';
import { startRetention } from './retention';

/**
 * The scheduler process: polls every SCHEDULER_TICK_MS for due schedule occurrences and
 * dispatches them. Several replicas may run at once; each occurrence is dispatched once.
 * Every RETENTION_INTERVAL_MS (0: never) it also runs the retention purge: results older than
 * RESULT_RETENTION_DAYS, expired idempotency records, ended sessions.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const runtime = createRuntime(config, { name: 'scheduler', dbPoolSize: 20 });
  const metrics = await startProcessMetrics(runtime);
  // `scheduler started` is said once Postgres and Redis answer (its /readyz checks them on each probe).
  await untilDependenciesReady(runtime);
  // Up to 16 dispatches at once (DEFAULT_DISPATCH_CONCURRENCY), each on its own connection.
  const scheduler = startScheduler(runtime.services, { tickMs: config.schedulerTickMs });
  const purge =
    config.retentionIntervalMs > 0
      ? startRetention(runtime.services, { intervalMs: config.retentionIntervalMs, resultRetentionDays: config.resultRetentionDays, monitorRetentionDays: config.monitorRetentionDays })
      : null;
  // Subscriptions past due beyond PLAN_GRACE_DAYS fall to free (extensions-3.md 2), checked every PLAN_GRACE_INTERVAL_MS.
  const grace = startPlanGrace(runtime.services, { intervalMs: config.planGraceIntervalMs });
  runtime.log.info(
    { tickMs: config.schedulerTickMs, retentionIntervalMs: config.retentionIntervalMs, resultRetentionDays: config.resultRetentionDays },
    'scheduler started',
  );

  // A pass still dispatching after the grace period is abandoned: its claimed runs are
  // committed, and another replica's recovery dispatches them.
  onShutdown(runtime.log, 'scheduler', async () => {
    metrics?.drain();
    await Promise.all([scheduler.stop(), purge?.stop(), grace.stop()]);
    await runtime.close();
    await metrics?.close();
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
