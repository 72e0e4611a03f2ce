import { loadConfig } from '@sdx/config';
import { createRuntime, onShutdown } from '@sdx/runtime';
import { startWorker } from './worker';

/** The worker process: scale it with `--scale worker=N`; each runs WORKER_CONCURRENCY attempts at once. */
async function main(): Promise<void> {
  const config = loadConfig();
  const runtime = createRuntime(config, { name: 'worker' });
  const worker = startWorker({
    services: runtime.services,
    providers: runtime.registry,
    redisUrl: config.redisUrl,
    concurrency: config.workerConcurrency,
  });
  runtime.log.info({ concurrency: config.workerConcurrency }, 'worker started');

  // Attempts still running after the grace period are abandoned; their heartbeat stops and the
  // reconciler hands them to another worker.
  onShutdown(runtime.log, 'worker', async () => {
    await worker.close();
    await runtime.close();
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
