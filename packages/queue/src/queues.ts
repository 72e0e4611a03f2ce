import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';
import IORedis, { type RedisOptions } from 'ioredis';

/**
 * The job catalog: every queue the fleet uses, its payload and its delivery options, in one
 * place. The API and the scheduler enqueue through it; workers process through it.
 *
 * A queue entry only wakes a worker for attempts: Postgres holds each job's state, attempts and
 * retries. An entry carries one job's attempt, or the first attempts of jobs admitted together
 * (see planEntries). Entry IDs are deterministic, so enqueueing the same attempt twice (a retry
 * of the API, the reconciler) adds nothing while the entry waits.
 */
export const QUEUES = {
  /** Single jobs (POST /v1/jobs, /v1/extract, scheduled single-target runs). */
  jobs: 'extract-jobs',
  /** Children of batches, kept apart so a 100-target batch does not starve single jobs. */
  batchChildren: 'extract-batch-children',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/**
 * One queue entry: the given attempt of one job, or the first attempts of several jobs admitted
 * together (jobIds, in admission order; jobId is the first of them).
 */
export interface ExtractionPayload {
  jobId: string;
  attempt: number;
  jobIds?: string[];
}

/** The jobs an entry carries. */
export function jobIdsOf(payload: ExtractionPayload): string[] {
  return payload.jobIds && payload.jobIds.length > 0 ? payload.jobIds : [payload.jobId];
}

/**
 * Jobs per shared entry, at most. Queue work (an add, a delivery, an acknowledgement) is per
 * entry, so the jobs of one admission share entries of up to this many; a worker with fewer
 * free slots hands the rest back to the queue (see the worker app).
 */
export const ENTRY_MAX_JOBS = 16;

/** One entry to add: its ID and the jobs it carries. */
export interface EntryPlan {
  id: string;
  jobIds: string[];
}

export const EXTRACTION_ENTRY = 'extract';

const ENTRY_OPTIONS: JobsOptions = {
  // The job's own retry policy lives in Postgres; BullMQ delivers each attempt once.
  attempts: 1,
  removeOnComplete: true,
  removeOnFail: true,
};

export function entryId(payload: Pick<ExtractionPayload, 'jobId' | 'attempt'>): string {
  return `${payload.jobId}-a${payload.attempt}`;
}

/**
 * The entries that carry the given attempt of `jobIds`, in order: runs of up to ENTRY_MAX_JOBS.
 * A run of one job is that job's own entry (entryId); a longer run is named after its first job
 * and its size. Both are deterministic, so adding the same plan twice adds nothing new while
 * the first entries still wait.
 */
export function planEntries(jobIds: readonly string[], attempt: number): EntryPlan[] {
  const plans: EntryPlan[] = [];
  for (let i = 0; i < jobIds.length; i += ENTRY_MAX_JOBS) {
    const run = jobIds.slice(i, i + ENTRY_MAX_JOBS);
    const id = run.length === 1 ? entryId({ jobId: run[0]!, attempt }) : `${run[0]}-a${attempt}+${run.length - 1}`;
    plans.push({ id, jobIds: run });
  }
  return plans;
}

/** The ID a planned entry's jobs name as their shared entry; null for a lone job's own entry. */
export function sharedEntry(plan: EntryPlan): string | null {
  return plan.jobIds.length > 1 ? plan.id : null;
}

/** A job attempt to enqueue; `entry` names the shared entry it travels in (null: its own). */
export interface EnqueueRequest {
  jobId: string;
  attempt: number;
  batchChild: boolean;
  entry?: string | null;
  /** Delay before the entry can be taken (a retry's backoff). */
  delayMs?: number;
}

/** Redis for long-lived blocking consumers (BullMQ workers): retry forever. */
export function createWorkerRedis(url: string, options: RedisOptions = {}): IORedis {
  return new IORedis(url, { maxRetriesPerRequest: null, enableReadyCheck: false, ...options });
}

/**
 * Redis for request paths: fail fast. No offline queue, so a command issued while Redis is
 * down errors at once instead of hanging; reconnects in the background.
 */
export function createFastRedis(url: string, options: RedisOptions = {}): IORedis {
  return new IORedis(url, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    connectTimeout: 1000,
    commandTimeout: 1000,
    retryStrategy: (times) => Math.min(times * 100, 1000),
    ...options,
  });
}

export class ExtractionQueues {
  readonly jobs: Queue<ExtractionPayload>;
  readonly batchChildren: Queue<ExtractionPayload>;

  constructor(connection: ConnectionOptions, readonly prefix: string) {
    this.jobs = new Queue<ExtractionPayload>(QUEUES.jobs, { connection, prefix });
    this.batchChildren = new Queue<ExtractionPayload>(QUEUES.batchChildren, { connection, prefix });
  }

  queueFor(isBatchChild: boolean): Queue<ExtractionPayload> {
    return isBatchChild ? this.batchChildren : this.jobs;
  }

  /** Adds the entry of one job's attempt. */
  enqueue(request: EnqueueRequest): Promise<void> {
    return this.enqueueMany([request]);
  }

  /**
   * Adds the entries of many job attempts, one bulk add per queue. Requests naming the same
   * shared entry (and attempt) become that one entry, carrying their jobs in order; the others
   * get an entry each.
   */
  enqueueMany(requests: readonly EnqueueRequest[]): Promise<void> {
    const adding = this.addEntries(requests);
    this.adding.add(adding);
    const done = () => this.adding.delete(adding);
    adding.then(done, done);
    return adding;
  }

  /** Resolves once every add started so far has answered (or failed). */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.adding]);
  }

  private readonly adding = new Set<Promise<void>>();

  private async addEntries(requests: readonly EnqueueRequest[]): Promise<void> {
    const byQueue = new Map<Queue<ExtractionPayload>, Map<string, { data: ExtractionPayload; delayMs?: number }>>();
    for (const { jobId, attempt, batchChild, entry, delayMs } of requests) {
      const queue = this.queueFor(batchChild);
      const entries = byQueue.get(queue) ?? new Map<string, { data: ExtractionPayload; delayMs?: number }>();
      byQueue.set(queue, entries);
      const id = entry ?? entryId({ jobId, attempt });
      const shared = entries.get(id);
      if (!shared) entries.set(id, { data: entry ? { jobId, attempt, jobIds: [jobId] } : { jobId, attempt }, delayMs });
      else if (shared.data.jobIds && !shared.data.jobIds.includes(jobId)) shared.data.jobIds.push(jobId);
    }
    for (const [queue, entries] of byQueue) {
      await queue.addBulk(
        [...entries].map(([id, { data, delayMs }]) => ({
          name: EXTRACTION_ENTRY,
          data,
          opts: { ...ENTRY_OPTIONS, jobId: id, delay: delayMs && delayMs > 0 ? Math.ceil(delayMs) : undefined },
        })),
      );
    }
  }

  /** Adds planned entries (see planEntries) of the given attempt. */
  async enqueuePlanned(plans: readonly EntryPlan[], attempt: number, batchChild: boolean): Promise<void> {
    await this.enqueueMany(plans.flatMap((plan) => plan.jobIds.map((jobId) => ({ jobId, attempt, batchChild, entry: sharedEntry(plan) }))));
  }

  /** Closes the queues once the adds in progress have answered. */
  async close(): Promise<void> {
    await this.idle();
    await Promise.all([this.jobs.close(), this.batchChildren.close()]);
  }
}
