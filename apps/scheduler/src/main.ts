import { loadConfig } from '@sdx/config';
import { createRuntime } from '@sdx/runtime';
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

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    runtime.log.info({ signal }, 'scheduler shutting down');
    // A pass still dispatching after the grace period is abandoned: its claimed runs are
    // committed, and another replica's recovery dispatches them.
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    await scheduler.stop();
    await runtime.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
