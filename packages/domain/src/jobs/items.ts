import type { Tenant } from '../resources';
import { RequestValidationError } from '../errors';
import { getKeptResultOrThrow } from './queries';
import { type ItemPosition, type ResultAccess, resultItemsPage } from './results';

/**
 * GET /v1/jobs/{job_id}/items (extensions.md 7): a completed result `limit` items at a time.
 * The cursor is the position of the page's first item (page and index in it), base64url so
 * that clients pass it back as it came rather than build one. Each call reads its own slice
 * (results.ts resultItemsPage); no call reads the whole result.
 */
export const ITEMS_PAGE_DEFAULT = 100;

export function encodeItemCursor(position: ItemPosition): string {
  return Buffer.from(`${position.page}:${position.index}`).toString('base64url');
}

/** The position a cursor names; null when it is not one this service hands out. */
export function decodeItemCursor(cursor: string): ItemPosition | null {
  const match = /^(\d{1,9}):(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  return match ? { page: Number(match[1]), index: Number(match[2]) } : null;
}

function invalidCursor(cursor: string): RequestValidationError {
  return new RequestValidationError([
    { loc: ['query', 'cursor'], msg: "The cursor names no position of this job's result; pass a next_cursor as it came", type: 'value_error', input: cursor },
  ]);
}

export interface JobItems {
  /** The page's items as JSON text, comma-separated, without brackets. */
  itemsJson: string;
  nextCursor: string | null;
}

/** A page of a job's result: 404 job_not_found, 409 results_not_ready, 410 results_expired, 422 for a cursor it never handed out. */
export async function readJobItems(store: ResultAccess, tenant: Tenant, jobId: string, page: { limit: number; cursor: string | null }): Promise<JobItems> {
  const job = await getKeptResultOrThrow(store.db, tenant, jobId);
  const from = page.cursor === null ? null : decodeItemCursor(page.cursor);
  if (page.cursor !== null && from === null) throw invalidCursor(page.cursor);
  const read = await resultItemsPage(store, job, from, page.limit);
  if (!read) throw invalidCursor(page.cursor ?? '');
  return { itemsJson: read.itemsJson, nextCursor: read.next ? encodeItemCursor(read.next) : null };
}
