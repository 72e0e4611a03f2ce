import { reconcileJobs, runJobAttempt, type ProviderLookup, type Services } from '@sdx/domain';
import { createWorkerRedis, startConsumer } from '@sdx/queue';

export interface WorkerOptions {
  services: Services;
  providers: ProviderLookup;
  redisUrl: string;
  /** Attempts this process runs at once (WORKER_CONCURRENCY). */
  concurrency: number;
  /** Run the reconciler in this process (every worker may; it is safe concurrently). */
  reconcile?: boolean;
}

export interface RunningWorker {
  close(): Promise<void>;
}

/**
 * The extraction worker: the queue consumer (packages/queue) wired to the domain's job runner,
 * and the reconciler on a timer. Each job a queue entry wakes is one attempt of runJobAttempt.
 */
export function startWorker(options: WorkerOptions): RunningWorker {
  const { services, providers } = options;
  const { log } = services;
  const connection = createWorkerRedis(options.redisUrl);
  connection.on('error', (err) => log.debug({ err: err.message }, 'worker redis error'));
  const consumer = startConsumer({
    connection,
    queues: services.queues,
    concurrency: options.concurrency,
    run: async (jobId, attempt, handOver) => {
      try {
        await runJobAttempt(services, providers, jobId, { onDelivered: handOver });
      } catch (err) {
        // The job stays running under its lease; when its heartbeat stops, the reconciler retries it.
        log.warn({ err, jobId, attempt }, 'attempt failed; the reconciler will retry it');
      }
    },
    onError: (message, context) => log.warn(context, message),
  });

  let reconciling = false;
  const timer =
    options.reconcile === false
      ? null
      : setInterval(() => {
          if (reconciling) return;
          reconciling = true;
          reconcileJobs(services)
            .then((report) => {
              if (report.requeued || report.failed || report.enqueued) log.info(report, 'reconciled jobs');
            })
            .catch((err) => log.warn({ err }, 'reconcile failed'))
            .finally(() => {
              reconciling = false;
            });
        }, services.config.reconcileIntervalMs);
  timer?.unref();

  return {
    async close() {
      if (timer) clearInterval(timer);
      await consumer.close();
      connection.disconnect();
    },
  };
}
