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

/** Delivered attempts waiting for their completion commit, per consumer slot, at most. */
const COMMITTING_PER_SLOT = 8;

/**
 * The extraction worker: one BullMQ consumer per queue of the job catalog. The handler is thin:
 * one entry = one attempt of one job, run by the domain's runJobAttempt.
 *
 * A slot is given back to BullMQ as soon as its attempt has delivered and handed its completion
 * to the completion group, not when that group commits: the queue entry only woke the attempt,
 * and Postgres keeps the job running under its lease (heartbeat included) until the commit. If
 * the process dies before it, the job's heartbeat stops and the reconciler hands it to another
 * worker, as for a crash during extraction. Commits waiting are bounded (COMMITTING_PER_SLOT per
 * slot: past that a slot waits before taking its next entry) and awaited on close.
 */
export function startWorker(options: WorkerOptions): RunningWorker {
  const { services, providers } = options;
  const connection = createWorkerRedis(options.redisUrl);
  connection.on('error', (err) => services.log.debug({ err: err.message }, 'worker redis error'));
  const committing = new Set<Promise<void>>();
  const maxCommitting = options.concurrency * COMMITTING_PER_SLOT;
  const process = async (entry: { data: ExtractionPayload }) => {
    while (committing.size >= maxCommitting) await Promise.race(committing);
    const { jobId, attempt } = entry.data;
    let delivered!: () => void;
    const handedOver = new Promise<'committing'>((resolve) => {
      delivered = () => resolve('committing');
    });
    const run = runJobAttempt(services, providers, jobId, { onDelivered: delivered });
    const outcome = await Promise.race([run, handedOver]);
    if (outcome !== 'committing') {
      services.log.debug({ jobId, attempt, outcome }, 'attempt finished');
      return outcome;
    }
    const commit = run.then(
      (final) => services.log.debug({ jobId, attempt, outcome: final }, 'attempt finished'),
      // The job stays running under its lease; when its heartbeat stops, the reconciler retries it.
      (err) => services.log.warn({ err, jobId, attempt }, 'completion of a delivered attempt failed'),
    );
    committing.add(commit);
    void commit.finally(() => committing.delete(commit));
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
      await Promise.allSettled([...committing]);
      connection.disconnect();
    },
  };
}
