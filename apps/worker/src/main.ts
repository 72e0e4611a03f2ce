import { loadConfig } from '@sdx/config';
import { createRuntime, onShutdown, startProcessMetrics, untilDependenciesReady } from '@sdx/runtime';
import { startWorker } from './worker';

/** The worker process: scale it with `--scale worker=N`; each runs WORKER_CONCURRENCY attempts at once. */
async function main(): Promise<void> {
  const config = loadConfig();
  const runtime = createRuntime(config, { name: 'worker' });
  const metrics = await startProcessMetrics(runtime);
  // `worker started` is said once Postgres and Redis answer (its /readyz checks them on each probe).
  await untilDependenciesReady(runtime);
  const worker = startWorker({
    services: runtime.services,
    providers: runtime.registry,
    redisUrl: config.redisUrl,
    concurrency: config.workerConcurrency,
  });
  runtime.log.info({ concurrency: config.workerConcurrency }, 'worker started');

  // Attempts still extracting after WORKER_SHUTDOWN_GRACE_MS hand their jobs back to the queue,
  // for another worker at once; the process itself is given a few seconds more to do that.
  onShutdown(
    runtime.log,
    'worker',
    async () => {
      metrics?.drain();
      await worker.close({ graceMs: config.workerShutdownGraceMs });
      await runtime.close();
      await metrics?.close();
    },
    config.workerShutdownGraceMs + 5_000,
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
