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
}

export type FlushResult<O> = Array<O | Error>;

interface Pending<I, O> {
  item: I;
  resolve(value: O): void;
  reject(error: unknown): void;
}

export class GroupCommit<I, O> {
  private readonly queue: Array<Pending<I, O>> = [];
  private inFlight = 0;
  private scheduled = false;
  private readonly maxBatch: number;
  private readonly maxInFlight: number;

  constructor(
    private readonly flush: (items: I[]) => Promise<FlushResult<O>>,
    options: GroupCommitOptions = {},
  ) {
    this.maxBatch = Math.max(1, options.maxBatch ?? 64);
    this.maxInFlight = Math.max(1, options.maxInFlight ?? 1);
  }

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
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
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const group = this.queue.splice(0, this.maxBatch);
      this.inFlight += 1;
      void this.flushGroup(group).finally(() => {
        this.inFlight -= 1;
        this.schedule();
      });
    }
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
      else p.resolve(result as O);
    });
  }
}

/** One instance of something per Services object (per process), made on first use. */
export function perProcess<K extends object, V>(cache: WeakMap<K, V>, owner: K, make: () => V): V {
  let value = cache.get(owner);
  if (!value) {
    value = make();
    cache.set(owner, value);
  }
  return value;
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
