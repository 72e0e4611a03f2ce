import type { RequestHandler } from 'express';
import type { AppConfig } from '@sdx/config';
import { createDb, type Db, type Executor } from '@sdx/db';
import { ApiError } from '@sdx/domain/api';

/**
 * Heavy reads: reads that stream more than `minItems` result items (GET /v1/jobs/{id} or
 * GET /v1/jobs of such jobs, any export of them). Two bounds keep them from crowding out
 * everything else in an API process:
 *
 * - Per workspace: a heavy read holds one of the workspace's `perWorkspace` places from its
 *   start until its response closes (finished, or the client went away). Beyond the bound:
 *   429 concurrent_read_limit_exceeded with Retry-After, before anything is read. Reads of
 *   small results are never counted, so one tenant streaming large results cannot take every
 *   place another tenant's reads need.
 * - Per process: the slice queries of every heavy read (any workspace) run on a pool of their
 *   own, HEAVY_READ_CONNECTIONS connections (1 by default). They take turns on it, first come
 *   first served, so heavy reads together keep at most that many Postgres backends busy, and
 *   they never hold a connection a light request is waiting for. Without that pool (tests that
 *   build the app by hand), heavy reads use the process's pool like any other read.
 * - Light requests first: while any other request is in progress in the process, a heavy
 *   read's next slice query waits for it to finish, for at most YIELD_MAX_MS. So a slice's
 *   Postgres and CPU time is spent when nobody else is waiting for them: a tenant polling a
 *   large result at its full rate costs another tenant's request at most the slice already
 *   under way, and a heavy read still moves on, a slice per YIELD_MAX_MS, however busy the
 *   process is. A request counts as in progress from its arrival until it is answered, for at
 *   most COUNTS_FOR_MS: a live stream, a long synchronous wait or a request whose client went
 *   away stops counting then, and a heavy read stops counting once admitted.
 */
/** What a read's place is held by: a response, which emits 'close' once finished or cut. */
export interface Closes {
  once(event: 'close', listener: () => void): unknown;
}

/** What `track` follows: a response, which emits 'finish' once answered. */
export interface Answers {
  once(event: 'finish', listener: () => void): unknown;
}

/** The longest a heavy read's next slice waits for the requests in progress to finish. */
export const YIELD_MAX_MS = 25;
/** How long a request counts as in progress at most (a live stream, a long synchronous wait). */
export const COUNTS_FOR_MS = 1_000;

export class HeavyReads {
  private readonly active = new Map<string, number>();
  /** Requests in progress, each with the timer that ends its counting at COUNTS_FOR_MS. */
  private readonly inProgress = new Map<object, NodeJS.Timeout>();
  /** Heavy slices waiting for the requests in progress to finish. */
  private waiting: Array<() => void> = [];

  constructor(
    readonly perWorkspace: number,
    readonly minItems: number,
    /** The heavy reads' own pool (owned: close() ends it), or null to read with the caller's. */
    private readonly pool: Db | null = null,
  ) {}

  /**
   * The bounds of `config`, with a pool of HEAVY_READ_CONNECTIONS connections for the slice
   * queries, each of which waits for its turn (`turn`) before it takes a connection.
   */
  static fromConfig(config: AppConfig): HeavyReads {
    const pool = createDb({
      connectionString: config.databaseUrl,
      max: config.heavyReadConnections,
      applicationName: 'api-heavy-reads',
      beforeAcquire: () => reads.turn(),
    });
    const reads = new HeavyReads(config.heavyReadsPerWorkspace, config.heavyReadMinItems, pool);
    return reads;
  }

  /** Middleware: counts each request as in progress (see the top of this file). */
  readonly track: RequestHandler = (_req, res, next) => {
    this.started(res);
    next();
  };

  /**
   * Counts `res` as in progress until it is answered, or COUNTS_FOR_MS have passed (one whose
   * client went away is never answered: the bound ends its counting).
   */
  started(res: Answers): void {
    this.inProgress.set(res, setTimeout(() => this.finished(res), COUNTS_FOR_MS).unref());
    res.once('finish', () => this.finished(res));
  }

  private finished(res: object): void {
    const timer = this.inProgress.get(res);
    if (!timer) return;
    clearTimeout(timer);
    this.inProgress.delete(res);
    if (this.inProgress.size === 0) {
      const waiting = this.waiting;
      this.waiting = [];
      for (const go of waiting) go();
    }
  }

  /** Resolves once no other request is in progress, or after YIELD_MAX_MS: a heavy slice's turn. */
  turn(): Promise<void> {
    if (this.inProgress.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const go = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiting = this.waiting.filter((other) => other !== go);
        resolve();
      }, YIELD_MAX_MS);
      this.waiting.push(go);
    });
  }

  /** Requests counted as in progress (tests). */
  requestsInProgress(): number {
    return this.inProgress.size;
  }

  /**
   * Counts a read of `items` result items for `workspaceId` until `res` closes (throws the 429
   * beyond the bound), and answers what to read its result slices with: the heavy reads' pool
   * for a heavy read, `db` for a small one.
   */
  admit(res: Closes, workspaceId: string, items: number, db: Executor): Executor {
    if (items <= this.minItems) return db;
    const running = this.active.get(workspaceId) ?? 0;
    if (running >= this.perWorkspace) {
      throw new ApiError(
        'concurrent_read_limit_exceeded',
        `This workspace is already reading ${running} large results at once, its limit; retry once one has finished.`,
        { active: running, limit: this.perWorkspace },
        { 'Retry-After': '1' },
      );
    }
    this.active.set(workspaceId, running + 1);
    // A heavy read is not one of the requests that heavy slices wait for.
    this.finished(res);
    res.once('close', () => {
      const left = (this.active.get(workspaceId) ?? 1) - 1;
      if (left > 0) this.active.set(workspaceId, left);
      else this.active.delete(workspaceId);
    });
    return this.pool ?? db;
  }

  /** Heavy reads in progress for a workspace (tests, metrics). */
  running(workspaceId: string): number {
    return this.active.get(workspaceId) ?? 0;
  }

  /** Ends the heavy reads' pool, if this owns one. */
  async close(): Promise<void> {
    await this.pool?.destroy();
  }
}
