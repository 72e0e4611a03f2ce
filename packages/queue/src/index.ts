import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';
import IORedis, { type RedisOptions } from 'ioredis';

/**
 * The job catalog: every queue the fleet uses, its payload and its delivery options, in one
 * place. The API and the scheduler enqueue through it; workers process through it.
 *
 * A queue entry only wakes a worker for one attempt of one job: Postgres holds the job's state,
 * attempts and retries. Entry IDs are derived from the job ID and attempt, so enqueueing the same
 * attempt twice (a retry of the API, the reconciler) adds nothing.
 */
export const QUEUES = {
  /** Single jobs (POST /v1/jobs, /v1/extract, scheduled single-target runs). */
  jobs: 'extract-jobs',
  /** Children of batches, kept apart so a 100-target batch does not starve single jobs. */
  batchChildren: 'extract-batch-children',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

export interface ExtractionPayload {
  jobId: string;
  attempt: number;
}

export const EXTRACTION_ENTRY = 'extract';

const ENTRY_OPTIONS: JobsOptions = {
  // The job's own retry policy lives in Postgres; BullMQ delivers each attempt once.
  attempts: 1,
  removeOnComplete: true,
  removeOnFail: true,
};

export function entryId(payload: ExtractionPayload): string {
  return `${payload.jobId}-a${payload.attempt}`;
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

  async enqueue(payload: ExtractionPayload & { batchChild: boolean; delayMs?: number }): Promise<void> {
    const { batchChild, delayMs, ...data } = payload;
    await this.queueFor(batchChild).add(EXTRACTION_ENTRY, data, {
      ...ENTRY_OPTIONS,
      jobId: entryId(data),
      delay: delayMs && delayMs > 0 ? Math.ceil(delayMs) : undefined,
    });
  }

  async enqueueMany(payloads: Array<ExtractionPayload & { batchChild: boolean }>): Promise<void> {
    const groups = new Map<Queue<ExtractionPayload>, ExtractionPayload[]>();
    for (const { batchChild, ...data } of payloads) {
      const queue = this.queueFor(batchChild);
      groups.set(queue, [...(groups.get(queue) ?? []), data]);
    }
    for (const [queue, list] of groups) {
      await queue.addBulk(list.map((data) => ({ name: EXTRACTION_ENTRY, data, opts: { ...ENTRY_OPTIONS, jobId: entryId(data) } })));
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.jobs.close(), this.batchChildren.close()]);
  }
}
