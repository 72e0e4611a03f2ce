import { setMaxListeners } from 'node:events';
import { Worker } from 'bullmq';
import type { RedisClient } from './redis';
import { type ExtractionPayload, type ExtractionQueues, jobIdsOf, planEntries, QUEUES } from './queues';

/**
 * The consumer of the extraction queues for one worker process. It knows queue entries and
 * attempt slots, nothing of what an attempt does: `run` is handed each job an entry wakes.
 *
 * Slots (`concurrency` of them) bound the attempts, not the entries. An entry of several jobs
 * (jobs admitted together share one, see planEntries) starts as many of them as there are free
 * slots and hands the rest back to the queue at once, for any worker. The entry is done as soon
 * as its attempts have started: the queue only wakes attempts, and Postgres holds each job from
 * its claim on (a lease and a heartbeat; if this process dies, the reconciler re-adds a job
 * still queued and re-runs one whose heartbeat stopped). So each slot is refilled as soon as it
 * frees, whatever the entry its attempt came in.
 *
 * Each queue is consumed one entry at a time. An entry that finds every slot busy waits for the
 * first to free, so a busy worker holds at most one entry per queue that another worker could
 * start; it then takes what is free after that turn and hands the rest back.
 *
 * A slot is given back as soon as its attempt calls `handOver` (it has delivered and handed its
 * completion to a group commit), not when that commit is done; the commits waiting are bounded
 * (COMMITTING_PER_SLOT per slot: past that an attempt waits before it starts). close() stops
 * taking entries, hands back an entry still waiting for a slot, and waits for the attempts and
 * commits in progress.
 *
 * On shutdown, close({ graceMs }) gives the attempts in progress that long to finish; then it
 * aborts the signal each was handed, and the runner hands its job back to the queue at once
 * (the job-state module's handBack), instead of leaving it to wait for its heartbeat to expire.
 */
export interface ConsumerOptions {
  connection: RedisClient;
  queues: ExtractionQueues;
  /** Attempts this process runs at once. */
  concurrency: number;
  /**
   * Runs one attempt; calls `handOver` once only its commit is left. `shutdown` is aborted when
   * the process is stopping and the attempt must hand its job back.
   */
  run(jobId: string, attempt: number, handOver: () => void, shutdown: AbortSignal): Promise<unknown>;
  /** A failure the queue recovers from by itself (an entry not handed back, a connection error). */
  onError(message: string, context: Record<string, unknown>): void;
}

export interface CloseOptions {
  /** How long attempts in progress may go on before they are told to hand their jobs back (default: no limit). */
  graceMs?: number;
}

export interface RunningConsumer {
  close(options?: CloseOptions): Promise<void>;
}

/** Delivered attempts waiting for their completion commit, per slot, at most. */
const COMMITTING_PER_SLOT = 8;

class AttemptSlots {
  private readonly waiters: Array<(got: boolean) => void> = [];

  constructor(private free: number) {}

  /** One slot, waiting while none is free; false when the wait was cancelled (closing). */
  async acquire(): Promise<boolean> {
    if (this.free > 0) {
      this.free -= 1;
      return true;
    }
    return new Promise<boolean>((resolve) => this.waiters.push(resolve));
  }

  /** Ends every wait for a slot without one. */
  cancelWaits(): void {
    for (const waiter of this.waiters.splice(0)) waiter(false);
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
      waiter(true);
      return;
    }
    this.free += 1;
  }
}

export function startConsumer(options: ConsumerOptions): RunningConsumer {
  const { queues } = options;
  const committing = new Set<Promise<unknown>>();
  const running = new Set<Promise<unknown>>();
  const maxCommitting = options.concurrency * COMMITTING_PER_SLOT;
  const slots = new AttemptSlots(options.concurrency);
  /** Aborted once the shutdown grace is over: the attempts still running hand their jobs back. */
  const shutdown = new AbortController();
  // Every attempt in progress listens to it (one listener each, removed when it ends).
  setMaxListeners(0, shutdown.signal);
  let closing = false;

  /** One attempt in a slot already taken; the slot frees once the attempt has handed over or finished. */
  const runAttempt = async (jobId: string, attempt: number): Promise<void> => {
    try {
      while (committing.size >= maxCommitting) await Promise.race(committing);
      let handOver!: () => void;
      const handedOver = new Promise<'handed over'>((resolve) => {
        handOver = () => resolve('handed over');
      });
      const run = options.run(jobId, attempt, handOver, shutdown.signal);
      if ((await Promise.race([run, handedOver])) !== 'handed over') return;
      const commit = run.catch(() => undefined);
      committing.add(commit);
      void commit.finally(() => committing.delete(commit));
    } catch (err) {
      options.onError('attempt failed unexpectedly; the reconciler will retry it', { err, jobId, attempt });
    } finally {
      slots.release();
    }
  };

  /** Back to the queue, as one entry, for any worker. If that fails, the reconciler re-adds them. */
  const handBack = async (jobIds: string[], attempt: number, batchChild: boolean, priority: number | undefined) => {
    if (jobIds.length === 0) return;
    await queues
      .enqueuePlanned(planEntries(jobIds, attempt), attempt, batchChild, priority)
      .catch((err) => options.onError('could not hand entries back; the reconciler will', { err, jobs: jobIds.length }));
  };

  const handler = (batchChild: boolean) => async (entry: { data: ExtractionPayload; opts: { priority?: number } }) => {
    const { attempt } = entry.data;
    const jobIds = jobIdsOf(entry.data);
    let started = closing ? 0 : slots.take(jobIds.length);
    if (started === 0 && !closing) {
      if (!(await slots.acquire())) {
        await handBack(jobIds, attempt, batchChild, entry.opts.priority);
        return 0;
      }
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
    await handBack(jobIds.slice(started), attempt, batchChild, entry.opts.priority);
    return started;
  };

  const workers = (
    [
      [QUEUES.jobs, false],
      [QUEUES.batchChildren, true],
    ] as const
  ).map(([name, batchChild]) => {
    const worker = new Worker<ExtractionPayload>(name, handler(batchChild), {
      connection: options.connection,
      prefix: queues.prefix,
      concurrency: 1,
      // The job's heartbeat in Postgres is the source of truth; BullMQ's stall check re-delivers
      // entries of a dead worker, and the claim ignores entries whose job is owned and alive.
      stalledInterval: 5_000,
      maxStalledCount: 10,
      // An entry a dead worker held (waiting for a slot) goes back to the queue once its lock
      // lapses: 10 s rather than BullMQ's 30 s (the lock is renewed every 5 s while held).
      lockDuration: 10_000,
    });
    worker.on('error', (err) => options.onError('worker error', { err: err.message }));
    return worker;
  });

  return {
    async close(closeOptions = {}) {
      closing = true;
      // An entry waiting for a slot goes back to the queue now, for another worker.
      slots.cancelWaits();
      const timer =
        closeOptions.graceMs === undefined
          ? null
          : setTimeout(() => shutdown.abort(new Error('worker shutting down')), closeOptions.graceMs);
      try {
        await Promise.all(workers.map((worker) => worker.close()));
        await Promise.allSettled([...running]);
        await Promise.allSettled([...committing]);
      } finally {
        if (timer) clearTimeout(timer);
      }
    },
  };
}
