import { loadConfig } from '@sdx/config';
import { createRuntime } from '@sdx/runtime';
import { startWorker } from './worker';

/** The worker process: scale it with `--scale worker=N`; each runs WORKER_CONCURRENCY attempts at once. */
async function main(): Promise<void> {
  const config = loadConfig();
  const runtime = createRuntime(config, { name: 'worker' });
  const worker = startWorker({
    services: runtime.services,
    providers: runtime.registry,
    redisUrl: config.redisUrl,
    prefix: config.redisPrefix,
    concurrency: config.workerConcurrency,
  });
  runtime.log.info({ concurrency: config.workerConcurrency }, 'worker started');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    runtime.log.info({ signal }, 'worker shutting down');
    // Attempts still running after the grace period are abandoned; their heartbeat stops and the
    // reconciler hands them to another worker.
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    await worker.close();
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
