import { ApiError } from '@sdx/domain';

/**
 * The per-workspace bound on heavy reads, per API process: a read that streams more than
 * `minItems` result items (GET /v1/jobs/{id} or GET /v1/jobs of such jobs, any export of them)
 * holds one of the workspace's `perWorkspace` places from its start until its response closes
 * (finished, or the client went away). Beyond the bound: 429 concurrent_read_limit_exceeded with
 * Retry-After, before anything is read. Reads of small results are never counted, so one
 * tenant streaming large results cannot take every place another tenant's reads need, and a
 * tenant polling a large job at its full rate limit keeps at most `perWorkspace` of them going.
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
  ) {}

  /** Counts a read of `items` result items for `workspaceId` until `res` closes; throws the 429 beyond the bound. */
  admit(res: Closes, workspaceId: string, items: number): void {
    if (items <= this.minItems) return;
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
  }

  /** Heavy reads in progress for a workspace (tests, metrics). */
  running(workspaceId: string): number {
    return this.active.get(workspaceId) ?? 0;
  }
}
