import { Worker } from 'bullmq';
import { reconcileJobs, runJobAttempt, type ProviderLookup, type Services } from '@sdx/domain';
import { createWorkerRedis, type ExtractionPayload, QUEUES } from '@sdx/queue';

export interface WorkerOptions {
  services: Services;
  providers: ProviderLookup;
  redisUrl: string;
  prefix: string;
  concurrency: number;
  /** Run the reconciler in this process (every worker may; it is safe concurrently). */
  reconcile?: boolean;
}

export interface RunningWorker {
  close(): Promise<void>;
}

/**
 * The extraction worker: one BullMQ consumer per queue of the job catalog. The handler is thin:
 * one entry = one attempt of one job, run by the domain's runJobAttempt.
 */
export function startWorker(options: WorkerOptions): RunningWorker {
  const { services, providers } = options;
  const connection = createWorkerRedis(options.redisUrl);
  connection.on('error', (err) => services.log.debug({ err: err.message }, 'worker redis error'));
  const process = async (entry: { data: ExtractionPayload }) => {
    const outcome = await runJobAttempt(services, providers, entry.data.jobId);
    services.log.debug({ jobId: entry.data.jobId, attempt: entry.data.attempt, outcome }, 'attempt finished');
    return outcome;
  };
  const workers = [QUEUES.jobs, QUEUES.batchChildren].map(
    (name) =>
      new Worker<ExtractionPayload>(name, process, {
        connection,
        prefix: options.prefix,
        concurrency: options.concurrency,
        // The job's heartbeat in Postgres is the source of truth; BullMQ's stall check re-delivers
        // entries of a dead worker, and the claim ignores entries whose job is owned and alive.
        stalledInterval: 5_000,
        maxStalledCount: 10,
      }),
  );
  for (const w of workers) w.on('error', (err) => services.log.warn({ err: err.message }, 'worker error'));

  let reconciling = false;
  const timer = options.reconcile === false
    ? null
    : setInterval(() => {
        if (reconciling) return;
        reconciling = true;
        reconcileJobs(services)
          .then((report) => {
            if (report.requeued || report.failed || report.enqueued) services.log.info(report, 'reconciled jobs');
          })
          .catch((err) => services.log.warn({ err }, 'reconcile failed'))
          .finally(() => {
            reconciling = false;
          });
      }, services.config.reconcileIntervalMs);
  timer?.unref();

  return {
    async close() {
      if (timer) clearInterval(timer);
      await Promise.all(workers.map((w) => w.close()));
      connection.disconnect();
    },
  };
}
