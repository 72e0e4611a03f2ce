import { loadConfig } from '@sdx/config';
import { BackgroundRunner, createRuntime, onShutdown, startProcessMetrics, tasksOf, untilDependenciesReady } from '@sdx/runtime';

/**
 * The scheduler process: the catalog's scheduler tasks (packages/runtime/src/background/catalog.ts)
 * on one runner. Every SCHEDULER_TICK_MS it dispatches the due schedule occurrences and the
 * monitors' runs, every second it recovers runs a dead process abandoned; every
 * RETENTION_INTERVAL_MS (0: never) one replica purges what is past retention and sweeps the
 * results bucket, and every PLAN_GRACE_INTERVAL_MS one replica moves subscriptions past due
 * beyond PLAN_GRACE_DAYS to free (extensions-3.md 2). Several replicas may run at once; each
 * occurrence is dispatched once.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const runtime = createRuntime(config, { name: 'scheduler', dbPoolSize: 20 });
  const metrics = await startProcessMetrics(runtime);
  // `scheduler started` is said once Postgres and Redis answer (its /readyz checks them on each probe).
  await untilDependenciesReady(runtime);
  // Up to 16 dispatches at once (DEFAULT_DISPATCH_CONCURRENCY), each on its own connection.
  const runner = new BackgroundRunner({
    tasks: tasksOf('scheduler'),
    context: { services: runtime.services, redisUrl: config.redisUrl },
    redis: runtime.redis,
  }).start();
  runtime.log.info(
    {
      tasks: runner.running,
      tickMs: config.schedulerTickMs,
      retentionIntervalMs: config.retentionIntervalMs,
      resultRetentionDays: config.resultRetentionDays,
    },
    'scheduler started',
  );

  // A pass still dispatching after the grace period is abandoned: its claimed runs are
  // committed, and another replica's recovery dispatches them.
  onShutdown(runtime.log, 'scheduler', async () => {
    metrics?.drain();
    await runner.stop();
    await runtime.close();
    await metrics?.close();
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
