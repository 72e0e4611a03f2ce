import { Queue, type JobsOptions } from 'bullmq';
import { queuePrefix, type RedisClient } from './redis';

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
  /** Webhook delivery attempts (extensions.md 5): each entry wakes one attempt of one delivery. */
  webhookDeliveries: 'webhook-deliveries',
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
export const DELIVERY_ENTRY = 'deliver';

/**
 * One attempt of one webhook delivery. Postgres holds the delivery (status, attempts, lease,
 * next attempt); the entry only wakes a worker for it, and carries the webhook so the worker can
 * bound the attempts in flight per receiver without a read.
 */
export interface DeliveryPayload {
  deliveryId: string;
  webhookId: string;
}

export interface DeliveryRequest extends DeliveryPayload {
  /** The attempt the entry is for: with the delivery, its entry's ID (adding it twice adds nothing while it waits). */
  attempt: number;
  delayMs?: number;
}

/** BullMQ's highest priority number (2^21 - 1). */
const PRIORITY_LIMIT = 2 ** 21 - 1;

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
    const id = run.length === 1 ? entryId({ jobId: run[0], attempt }) : `${run[0]}-a${attempt}+${run.length - 1}`;
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
  /**
   * The entry's priority: 1 goes first; entries of equal priority in order of addition. The
   * admission gives a job its rank among its workspace's active jobs, so the queue takes the
   * first job of every workspace, then the second of every workspace, and so on. A shared
   * entry takes its first request's.
   */
  priority?: number;
}

/** How the queue orders entries: by priority (round robin across workspaces) or first in, first out. */
export type QueueFairness = 'workspace' | 'fifo';

/** How long a deployment's data epoch is kept after it was last read or stored (a day). */
const DATA_EPOCH_TTL_S = 86_400;

/** The Redis key of a deployment's data epoch (see ExtractionQueues.dataEpoch). */
export function dataEpochKey(prefix: string, deployment: string): string {
  return `${prefix}:reconcile:${deployment}:epoch`;
}

export class ExtractionQueues {
  readonly jobs: Queue<ExtractionPayload>;
  readonly batchChildren: Queue<ExtractionPayload>;
  readonly webhookDeliveries: Queue<DeliveryPayload>;
  /**
   * The prefix of the queues' keys (what a BullMQ worker of these queues takes): the
   * deployment's prefix, hash-tagged on a Redis Cluster (queuePrefix).
   */
  readonly prefix: string;

  constructor(
    private readonly connection: RedisClient,
    /** The deployment's prefix (REDIS_PREFIX): the data epoch's key is under it. */
    private readonly keyPrefix: string,
    readonly fairness: QueueFairness = 'workspace',
    /**
     * The deployment whose data epoch the first add on each Redis connection starts (when it is
     * missing), and the clock it is read from (the reconciler's). Without it, only a
     * reconciler's pass starts the epoch.
     */
    private readonly epoch?: { deployment: string; now: () => Date },
  ) {
    // A new connection may be to a Redis that lost its data: its first add marks the epoch again.
    connection.on('ready', () => {
      this.epochMarked = false;
    });
    const prefix = queuePrefix(keyPrefix, connection);
    this.prefix = prefix;
    this.jobs = new Queue<ExtractionPayload>(QUEUES.jobs, { connection, prefix });
    this.batchChildren = new Queue<ExtractionPayload>(QUEUES.batchChildren, { connection, prefix });
    this.webhookDeliveries = new Queue<DeliveryPayload>(QUEUES.webhookDeliveries, { connection, prefix });
    // A queue re-emits its connection's faults (a timed-out command while Redis or the process is
    // stalled). The connection's own listener reports an outage once (packages/runtime); each
    // caller gets the failure of its own command. Without a listener BullMQ prints every one.
    for (const queue of [this.jobs, this.batchChildren, this.webhookDeliveries]) queue.on('error', () => undefined);
  }

  /**
   * Adds the entries of webhook delivery attempts, in one bulk add. An entry's ID names the
   * delivery and attempt (`tag` tells apart an attempt put off for its receiver's turn).
   */
  async enqueueDeliveries(requests: readonly DeliveryRequest[], tag = ''): Promise<void> {
    if (requests.length === 0) return;
    const adding = this.webhookDeliveries.addBulk(
      requests.map(({ deliveryId, webhookId, attempt, delayMs }) => ({
        name: DELIVERY_ENTRY,
        data: { deliveryId, webhookId },
        opts: {
          ...ENTRY_OPTIONS,
          jobId: `${deliveryId}-a${attempt}${tag}`,
          delay: delayMs && delayMs > 0 ? Math.ceil(delayMs) : undefined,
        },
      })),
    );
    const settled = adding.then(() => undefined);
    this.adding.add(settled);
    const done = () => this.adding.delete(settled);
    settled.then(done, done);
    await settled;
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

  private epochMarked = false;

  /**
   * Starts this deployment's data epoch, when none is stored, with the first add on a
   * connection. Without it, the first reconciler pass of a new deployment (or after Redis lost
   * its data) starts the epoch itself, finds every job admitted before that pass marked before
   * it, and adds each one's entry a second time. Marked at the first add, the epoch still lies
   * after every loss it follows (the loss came first), so no lost entry is missed; only the jobs
   * marked just before that first add get a second entry (which their claim skips).
   * Sent ahead of the add on the same connection, not awaited: the add goes out when it would
   * have without it, so a read after it on this connection still sees its entries.
   */
  private markDataEpoch(): void {
    const epoch = this.epoch;
    if (!epoch || this.epochMarked) return;
    this.epochMarked = true;
    this.connection
      .set(dataEpochKey(this.keyPrefix, epoch.deployment), String(epoch.now().getTime()), 'EX', DATA_EPOCH_TTL_S, 'NX')
      .catch(() => {
        // Redis is failing: the add fails with it, and the next add on a connection tries again.
        this.epochMarked = false;
      });
  }

  private async addEntries(requests: readonly EnqueueRequest[]): Promise<void> {
    this.markDataEpoch();
    type Planned = { data: ExtractionPayload; delayMs?: number; priority?: number };
    const byQueue = new Map<Queue<ExtractionPayload>, Map<string, Planned>>();
    for (const { jobId, attempt, batchChild, entry, delayMs, priority } of requests) {
      const queue = this.queueFor(batchChild);
      const entries = byQueue.get(queue) ?? new Map<string, Planned>();
      byQueue.set(queue, entries);
      const id = entry ?? entryId({ jobId, attempt });
      const shared = entries.get(id);
      if (!shared) entries.set(id, { data: entry ? { jobId, attempt, jobIds: [jobId] } : { jobId, attempt }, delayMs, priority });
      else if (shared.data.jobIds && !shared.data.jobIds.includes(jobId)) shared.data.jobIds.push(jobId);
    }
    for (const [queue, entries] of byQueue) {
      await queue.addBulk(
        [...entries].map(([id, { data, delayMs, priority }]) => ({
          name: EXTRACTION_ENTRY,
          data,
          opts: {
            ...ENTRY_OPTIONS,
            jobId: id,
            delay: delayMs && delayMs > 0 ? Math.ceil(delayMs) : undefined,
            priority: this.priorityOf(priority),
          },
        })),
      );
    }
  }

  /** Adds planned entries (see planEntries) of the given attempt, with the given priority. */
  async enqueuePlanned(plans: readonly EntryPlan[], attempt: number, batchChild: boolean, priority?: number): Promise<void> {
    await this.enqueueMany(
      plans.flatMap((plan) => plan.jobIds.map((jobId) => ({ jobId, attempt, batchChild, entry: sharedEntry(plan), priority }))),
    );
  }

  /**
   * BullMQ's priority for an entry: none in fifo mode; otherwise at least 1 (an entry without a
   * priority would go before every prioritized one) and at most BullMQ's limit.
   */
  private priorityOf(priority: number | undefined): number | undefined {
    if (this.fairness === 'fifo') return undefined;
    return Math.max(1, Math.min(PRIORITY_LIMIT, Math.floor(priority ?? 1)));
  }

  /**
   * The time this deployment first saw the Redis dataset it is on, kept in Redis: `candidate`
   * (a time of the services' clock) when the key is missing, that is on the first start or
   * after Redis lost its data, and no add has stored it yet (markDataEpoch); the stored time
   * otherwise. Every queue entry added before it may be gone. The key lives for a day from its
   * last read, so an idle deployment's is dropped.
   */
  async dataEpoch(deployment: string, candidate: Date): Promise<Date> {
    const client = this.connection;
    const key = dataEpochKey(this.keyPrefix, deployment);
    const [[setError], [getError, stored]] = (await client
      .multi()
      .set(key, String(candidate.getTime()), 'NX')
      .get(key)
      .expire(key, DATA_EPOCH_TTL_S)
      .exec()) as Array<[Error | null, unknown]>;
    const error = setError ?? getError;
    if (error) throw error;
    const time = Number(stored);
    return Number.isFinite(time) ? new Date(time) : candidate;
  }

  /** Closes the queues once the adds in progress have answered. */
  async close(): Promise<void> {
    await this.idle();
    await Promise.all([this.jobs.close(), this.batchChildren.close(), this.webhookDeliveries.close()]);
  }
}
