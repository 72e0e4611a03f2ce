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
class AttemptSlots {
  private readonly waiters: Array<() => void> = [];

  constructor(private free: number) {}

  /** One slot, waiting while none is free. */
  async acquire(): Promise<void> {
    if (this.free > 0) {
      this.free -= 1;
      return;
    }
    await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** Up to `count` of the slots free now, without waiting; how many were taken. */
  take(count: number): number {
    const taken = Math.max(0, Math.min(count, this.free));
    this.free -= taken;
    return taken;
  }

  release(): void {
    const waiter = this.waiters.shift();
    if (waiter) {
      waiter();
      return;
    }
    this.free += 1;
  }
}

/**
 * The extraction worker: one BullMQ consumer per queue of the job catalog. The handler is thin:
 * each job an entry carries is one attempt, run by the domain's runJobAttempt.
 *
 * Slots (AttemptSlots, WORKER_CONCURRENCY of them) bound the attempts, not the entries. An entry
 * of several jobs (jobs admitted together share one, see planEntries) starts as many of them as
 * there are free slots and hands the rest back to the queue at once, for any worker. The entry
 * is done as soon as its attempts have started: the queue only wakes attempts, and Postgres
 * holds each job from its claim on (a lease and a heartbeat; if this process dies, the
 * reconciler re-adds a job still queued and re-runs one whose heartbeat stopped). So each slot
 * is refilled as soon as it frees, whatever the entry its attempt came in.
 *
 * Each consumer takes one entry at a time. An entry that finds every slot busy waits for the
 * first to free, so a busy worker holds at most one entry per queue that another worker could
 * start; it then takes what is free after that turn (the attempts of one claim group hand over
 * together) and hands the rest back.
 *
 * A slot is given back as soon as its attempt has delivered and handed its completion to the
 * completion group, not when that group commits: Postgres keeps the job running under its lease
 * (heartbeat included) until the commit. If the process dies before it, the job's heartbeat
 * stops and the reconciler hands it to another worker, as for a crash during extraction.
 * Commits waiting are bounded (COMMITTING_PER_SLOT per slot: past that an attempt waits before
 * it starts). close() stops taking entries, hands back an entry still waiting for a slot, and
 * waits for the attempts and commits in progress.
 */
export function startWorker(options: WorkerOptions): RunningWorker {
  const { services, providers } = options;
  const connection = createWorkerRedis(options.redisUrl);
  connection.on('error', (err) => services.log.debug({ err: err.message }, 'worker redis error'));
  const committing = new Set<Promise<void>>();
  const running = new Set<Promise<unknown>>();
  const maxCommitting = options.concurrency * COMMITTING_PER_SLOT;
  const slots = new AttemptSlots(options.concurrency);
  let closing = false;

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
    } catch (err) {
      services.log.warn({ err, jobId, attempt }, 'attempt failed unexpectedly; the reconciler will retry it');
      return 'discarded';
    } finally {
      slots.release();
    }
  };

  /** Back to the queue, as one entry, for any worker. If that fails, the reconciler re-adds them. */
  const handBack = async (jobIds: string[], attempt: number, batchChild: boolean) => {
    if (jobIds.length === 0) return;
    await services.queues
      .enqueuePlanned(planEntries(jobIds, attempt), attempt, batchChild)
      .catch((err) => services.log.warn({ err, jobs: jobIds.length }, 'could not hand entries back; the reconciler will'));
  };

  const handler = (batchChild: boolean) => async (entry: { data: ExtractionPayload }) => {
    const { attempt } = entry.data;
    const jobIds = jobIdsOf(entry.data);
    let started = closing ? 0 : slots.take(jobIds.length);
    if (started === 0 && !closing) {
      await slots.acquire();
      // Let the other attempts handing over in this turn free their slots too.
      await new Promise((resolve) => setImmediate(resolve));
      started = 1 + slots.take(jobIds.length - 1);
      if (closing) {
        for (let i = 0; i < started; i++) slots.release();
        started = 0;
      }
    }
    for (const jobId of jobIds.slice(0, started)) {
      const attemptRun = runAttempt(jobId, attempt);
      running.add(attemptRun);
      void attemptRun.finally(() => running.delete(attemptRun));
    }
    await handBack(jobIds.slice(started), attempt, batchChild);
    return started;
  };

  const consumers = (
    [
      [QUEUES.jobs, false],
      [QUEUES.batchChildren, true],
    ] as const
  ).map(([name, batchChild]) => {
    const worker = new Worker<ExtractionPayload>(name, handler(batchChild), {
      connection,
      prefix: options.prefix,
      concurrency: 1,
      // The job's heartbeat in Postgres is the source of truth; BullMQ's stall check re-delivers
      // entries of a dead worker, and the claim ignores entries whose job is owned and alive.
      stalledInterval: 5_000,
      maxStalledCount: 10,
    });
    worker.on('error', (err) => services.log.warn({ err: err.message }, 'worker error'));
    return worker;
  });

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
      closing = true;
      if (timer) clearInterval(timer);
      await Promise.all(consumers.map((worker) => worker.close()));
      await Promise.allSettled([...running]);
      await Promise.allSettled([...committing]);
      connection.disconnect();
    },
  };
}
