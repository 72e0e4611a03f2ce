import { loadConfig } from '@sdx/config';
import { createRuntime, onShutdown } from '@sdx/runtime';
import { startScheduler } from '@sdx/scheduler-engine';

/**
 * The scheduler process: polls every SCHEDULER_TICK_MS for due schedule occurrences and
 * dispatches them. Several replicas may run at once; each occurrence is dispatched once.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const runtime = createRuntime(config, { name: 'scheduler', dbPoolSize: 20 });
  // Up to 16 dispatches at once (DEFAULT_DISPATCH_CONCURRENCY), each on its own connection.
  const scheduler = startScheduler(runtime.services, { tickMs: config.schedulerTickMs });
  runtime.log.info({ tickMs: config.schedulerTickMs }, 'scheduler started');

  // A pass still dispatching after the grace period is abandoned: its claimed runs are
  // committed, and another replica's recovery dispatches them.
  onShutdown(runtime.log, 'scheduler', async () => {
    await scheduler.stop();
    await runtime.close();
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
