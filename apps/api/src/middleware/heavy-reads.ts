import type { AppConfig } from '@sdx/config';
import { createDb, type Db, type Executor } from '@sdx/db';
import { ApiError } from '@sdx/domain';

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
 */
/** What a read's place is held by: a response, which emits 'close' once finished or cut. */
export interface Closes {
  once(event: 'close', listener: () => void): unknown;
}

export class HeavyReads {
  private readonly active = new Map<string, number>();

  constructor(
    readonly perWorkspace: number,
    readonly minItems: number,
    /** The heavy reads' own pool (owned: close() ends it), or null to read with the caller's. */
    private readonly pool: Db | null = null,
  ) {}

  /** The bounds of `config`, with a pool of HEAVY_READ_CONNECTIONS connections for the slice queries. */
  static fromConfig(config: AppConfig): HeavyReads {
    const pool = createDb({ connectionString: config.databaseUrl, max: config.heavyReadConnections, applicationName: 'api-heavy-reads' });
    return new HeavyReads(config.heavyReadsPerWorkspace, config.heavyReadMinItems, pool);
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
