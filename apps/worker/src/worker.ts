import { Worker } from 'bullmq';
import { reconcileJobs, runJobAttempt, type ProviderLookup, type RunOutcome, type Services } from '@sdx/domain';
import { createWorkerRedis, type ExtractionPayload, jobIdsOf, planEntries, QUEUES } from '@sdx/queue';

export interface WorkerOptions {
  services: Services;
  providers: ProviderLookup;
  redisUrl: string;
  prefix: string;
  /** Attempts this process runs at once (WORKER_CONCURRENCY). */
  concurrency: number;
  /** Run the reconciler in this process (every worker may; it is safe concurrently). */
  reconcile?: boolean;
}

export interface RunningWorker {
  close(): Promise<void>;
}

/** Delivered attempts waiting for their completion commit, per slot, at most. */
const COMMITTING_PER_SLOT = 8;

/**
 * The attempt slots of one worker process: `size` attempts at once, whatever the queue entries
 * that carry them (an entry may carry several jobs). A slot is held from the start of an
 * attempt until it has delivered and handed its completion over, or has finished.
 */
export class AttemptSlots {
  private free: number;
  private readonly waiters: Array<() => void> = [];

  constructor(
    readonly size: number,
    private readonly onChange: () => void = () => undefined,
  ) {
    this.free = size;
  }

  get available(): number {
    return this.free;
  }

  /** One slot, waiting while none is free. */
  async acquire(): Promise<void> {
    if (this.free > 0) {
      this.free -= 1;
      this.onChange();
      return;
    }
    await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** Up to `count` of the slots free now, without waiting; how many were taken. */
  take(count: number): number {
    const taken = Math.max(0, Math.min(count, this.free));
    if (taken > 0) {
      this.free -= taken;
      this.onChange();
    }
    return taken;
  }

  release(): void {
    const waiter = this.waiters.shift();
    if (waiter) {
      waiter();
      return;
    }
    this.free += 1;
    this.onChange();
  }
}

/**
 * The extraction worker: one BullMQ consumer per queue of the job catalog. The handler is thin:
 * each job an entry carries is one attempt, run by the domain's runJobAttempt.
 *
 * Slots (AttemptSlots, WORKER_CONCURRENCY of them) bound the attempts, not the entries. An entry
 * of several jobs (jobs admitted together share one, see planEntries) starts as many of them as
 * there are free slots and hands the rest back to the queue at once, for any worker. A consumer
 * fetches a new entry only while a slot is free, one at a time (its BullMQ concurrency is its
 * entries in hand plus one while a slot is free), so a busy process does not hold entries that
 * other workers could start.
 *
 * A slot is given back as soon as its attempt has delivered and handed its completion to the
 * completion group, not when that group commits: the queue entry only woke the attempt, and
 * Postgres keeps the job running under its lease (heartbeat included) until the commit. If the
 * process dies before it, the job's heartbeat stops and the reconciler hands it to another
 * worker, as for a crash during extraction. Commits waiting are bounded (COMMITTING_PER_SLOT per
 * slot: past that an attempt waits before it starts) and awaited on close.
 */
export function startWorker(options: WorkerOptions): RunningWorker {
  const { services, providers } = options;
  const connection = createWorkerRedis(options.redisUrl);
  connection.on('error', (err) => services.log.debug({ err: err.message }, 'worker redis error'));
  const committing = new Set<Promise<void>>();
  const maxCommitting = options.concurrency * COMMITTING_PER_SLOT;
  const consumers: Array<{ worker: Worker<ExtractionPayload>; entries: number }> = [];
  // A consumer fetches one entry at a time, and only while a slot is free: an entry fetched
  // while none is free would wait here, holding jobs that another worker could start.
  const fetchLimit = (entries: number) => Math.max(1, entries + (slots.available > 0 ? 1 : 0));
  const rebalance = () => {
    for (const c of consumers) c.worker.concurrency = fetchLimit(c.entries);
  };
  const slots = new AttemptSlots(options.concurrency, rebalance);

  /** One attempt in a slot already taken; settles once the attempt has handed over or finished. */
  const runAttempt = async (jobId: string, attempt: number): Promise<RunOutcome | 'committing'> => {
    try {
      while (committing.size >= maxCommitting) await Promise.race(committing);
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
    } finally {
      slots.release();
    }
  };

  const handler = (consumer: { entries: number }, batchChild: boolean) => async (entry: { data: ExtractionPayload }) => {
    consumer.entries += 1;
    try {
      const { attempt } = entry.data;
      const jobIds = jobIdsOf(entry.data);
      // Slots are taken in the same turn as the entry arrives, so the consumer's fetch limit
      // drops before BullMQ can fetch again; only when none is free does the entry wait.
      let started = slots.take(jobIds.length);
      if (started === 0) {
        await slots.acquire();
        started = 1 + slots.take(jobIds.length - 1);
      }
      const rest = jobIds.slice(started);
      if (rest.length > 0) {
        // Too few free slots here: the rest go back to the queue at once, for any worker. If that
        // fails, they stay queued in Postgres and the reconciler enqueues them again.
        await services.queues
          .enqueuePlanned(planEntries(rest, attempt), attempt, batchChild)
          .catch((err) => services.log.warn({ err, jobs: rest.length }, 'could not hand entries back; the reconciler will'));
      }
      return await Promise.all(jobIds.slice(0, started).map((jobId) => runAttempt(jobId, attempt)));
    } finally {
      consumer.entries -= 1;
      rebalance();
    }
  };

  for (const [name, batchChild] of [
    [QUEUES.jobs, false],
    [QUEUES.batchChildren, true],
  ] as const) {
    const consumer = { entries: 0 } as { worker: Worker<ExtractionPayload>; entries: number };
    consumer.worker = new Worker<ExtractionPayload>(name, handler(consumer, batchChild), {
      connection,
      prefix: options.prefix,
      concurrency: fetchLimit(0),
      // The job's heartbeat in Postgres is the source of truth; BullMQ's stall check re-delivers
      // entries of a dead worker, and the claim ignores entries whose job is owned and alive.
      stalledInterval: 5_000,
      maxStalledCount: 10,
    });
    consumer.worker.on('error', (err) => services.log.warn({ err: err.message }, 'worker error'));
    consumers.push(consumer);
  }

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
      await Promise.all(consumers.map((c) => c.worker.close()));
      await Promise.allSettled([...committing]);
      connection.disconnect();
    },
  };
}
