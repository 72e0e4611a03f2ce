/**
 * Group commit: many concurrent callers' writes share one transaction (one round trip per
 * statement for the whole group, one WAL flush, one lock of each row they touch), as Postgres
 * itself groups WAL flushes. While a flush is in flight, new submissions wait for the next one,
 * so batches grow with the load and a lone request is flushed at once (no timer, no added
 * latency when idle).
 *
 * The flush function answers each item separately: a value, or an Error for that item alone
 * (a 402 for one submission does not fail the others). If the flush itself throws (the
 * database is unreachable, the transaction aborted), every item of that group gets the error.
 */
export interface GroupCommitOptions {
  /** Items per flush at most (default 64). */
  maxBatch?: number;
  /** Flushes in flight at once (default 1). */
  maxInFlight?: number;
  /**
   * Overload bounds, for callers that answer someone waiting (a request): an item still waiting
   * for its flush after maxWaitMs, or submitted while maxQueued items wait, is refused with
   * GroupCommitOverloaded instead of queueing without end. Unbounded when not set.
   */
  maxWaitMs?: number;
  maxQueued?: number;
}

/**
 * The bounds of groups that answer a request: as long as the pool waits for a connection
 * (5 s), and no more waiting than a process can hold. Past them the answer is 503, not a wait.
 */
export const REQUEST_PATH_BOUNDS = { maxWaitMs: 5_000, maxQueued: 10_000 } as const;

/** The group's queue is over its bounds: a temporary refusal (the API answers 503 with Retry-After). */
export class GroupCommitOverloaded extends Error {
  constructor(message = 'too much work is waiting to be written; retry with backoff') {
    super(message);
    this.name = 'GroupCommitOverloaded';
  }
}

export type FlushResult<O> = Array<O | Error>;

interface Pending<I, O> {
  item: I;
  queuedAt: number;
  resolve(value: O): void;
  reject(error: unknown): void;
}

export class GroupCommit<I, O> {
  private readonly queue: Array<Pending<I, O>> = [];
  private inFlight = 0;
  private scheduled = false;
  private staleTimer: NodeJS.Timeout | null = null;
  private readonly maxBatch: number;
  private readonly maxInFlight: number;
  private readonly maxWaitMs: number;
  private readonly maxQueued: number;

  constructor(
    private readonly flush: (items: I[]) => Promise<FlushResult<O>>,
    options: GroupCommitOptions = {},
  ) {
    this.maxBatch = Math.max(1, options.maxBatch ?? 64);
    this.maxInFlight = Math.max(1, options.maxInFlight ?? 1);
    this.maxWaitMs = options.maxWaitMs ?? Number.POSITIVE_INFINITY;
    this.maxQueued = options.maxQueued ?? Number.POSITIVE_INFINITY;
  }

  submit(item: I): Promise<O> {
    if (this.queue.length >= this.maxQueued) return Promise.reject(new GroupCommitOverloaded());
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, queuedAt: performance.now(), resolve, reject });
      this.schedule();
      this.armStaleTimer();
    });
  }

  /** Items waiting for a flush (not counting those in flight). */
  get waiting(): number {
    return this.queue.length;
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    // Submissions of the same turn of the event loop join the same group.
    setImmediate(() => {
      this.scheduled = false;
      this.run();
    });
  }

  private run(): void {
    this.refuseStale();
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const group = this.queue.splice(0, this.maxBatch);
      this.inFlight += 1;
      void this.flushGroup(group).finally(() => {
        this.inFlight -= 1;
        this.schedule();
      });
    }
  }

  /** While items wait behind a flush, refuses each one when it reaches maxWaitMs. */
  private armStaleTimer(): void {
    if (this.staleTimer || !Number.isFinite(this.maxWaitMs) || this.queue.length === 0) return;
    const due = this.queue[0].queuedAt + this.maxWaitMs - performance.now();
    this.staleTimer = setTimeout(
      () => {
        this.staleTimer = null;
        this.refuseStale();
        this.armStaleTimer();
      },
      Math.max(0, due) + 1,
    );
    this.staleTimer.unref();
  }

  /** Refuses the items that waited past maxWaitMs (the oldest are at the front). */
  private refuseStale(): void {
    if (!Number.isFinite(this.maxWaitMs)) return;
    const limit = performance.now() - this.maxWaitMs;
    let stale = 0;
    while (stale < this.queue.length && this.queue[stale].queuedAt < limit) stale += 1;
    for (const p of this.queue.splice(0, stale)) p.reject(new GroupCommitOverloaded());
  }

  private async flushGroup(group: Array<Pending<I, O>>): Promise<void> {
    let results: FlushResult<O>;
    try {
      results = await this.flush(group.map((p) => p.item));
    } catch (error) {
      for (const p of group) p.reject(error);
      return;
    }
    group.forEach((p, i) => {
      const result = results[i];
      if (result instanceof Error) p.reject(result);
      else if (i >= results.length) p.reject(new Error('group commit: the flush answered fewer items than it was given'));
      else p.resolve(result);
    });
  }
}

/**
 * Whether Postgres refused a group's data (SQLSTATE class 22, data exception, or 23, integrity
 * constraint violation): then the group is worth retrying item by item, so that only the item at
 * fault fails. Other failures (unreachable, pool exhausted) would fail each item alike.
 */
export function refusedData(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^2[23]/.test(code);
}
