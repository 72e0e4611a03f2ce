import { sql } from 'kysely';
import type { Executor, JobRow } from '@sdx/db';
import { RequestValidationError } from '../errors';
import type { Tenant } from '../resources';
import { getKeptResultOrThrow } from './queries';
import { type ResultAccess, resultSourceId } from './result-slices';
import { type ItemPosition, resultItemsPage } from './results';

/**
 * GET /v1/jobs/{job_id}/items (extensions.md 7): a completed result `limit` items at a time.
 * The cursor is the position of the page's first item (page and index in it), base64url so
 * that clients pass it back as it came rather than build one. `offset` (an item's place in the
 * whole result) is turned into that position from the stored pages' item counts (itemAtOffset),
 * so a page far into the result (the last) is read without the ones before it.
 * Each call reads its own slice (results.ts resultItemsPage); no call reads the whole result.
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
    {
      loc: ['query', 'cursor'],
      msg: "The cursor names no position of this job's result; pass a next_cursor as it came",
      type: 'value_error',
      input: cursor,
    },
  ]);
}

export interface JobItems {
  /** The page's items as JSON text, comma-separated, without brackets. */
  itemsJson: string;
  nextCursor: string | null;
}

/**
 * Where the item at `offset` (0-based, in the whole result) is stored: the page whose items before
 * it number at most `offset` and with it more, from the pages' item counts (one index range of
 * job_result_pages, its rows' small columns; the items themselves are not read). Null past the end.
 */
export async function itemAtOffset(db: Executor, job: Pick<JobRow, 'id' | 'source_job_id'>, offset: number): Promise<ItemPosition | null> {
  const { rows } = await sql<{ page_no: number; before: string }>`
    select page_no, before
    from (
      select page_no, item_count, sum(item_count) over (order by page_no) - item_count as before
      from job_result_pages
      where job_id = ${resultSourceId(job)} and item_count > 0
    ) w
    where before <= ${offset}::bigint and before + item_count > ${offset}::bigint
  `.execute(db);
  const row = rows[0];
  return row ? { page: row.page_no, index: offset - Number(row.before) } : null;
}

/** A page of a job's result: 404 job_not_found, 409 results_not_ready, 410 results_expired, 422 for a cursor it never handed out. */
export async function readJobItems(
  store: ResultAccess,
  tenant: Tenant,
  jobId: string,
  page: { limit: number; cursor: string | null; offset?: number | null },
): Promise<JobItems> {
  const offset = page.offset ?? null;
  if (offset !== null && page.cursor !== null) {
    throw new RequestValidationError([
      { loc: ['query', 'offset'], msg: 'Pass either cursor or offset, not both', type: 'value_error', input: offset },
    ]);
  }
  const job = await getKeptResultOrThrow(store.db, tenant, jobId);
  const from = page.cursor === null ? null : decodeItemCursor(page.cursor);
  if (page.cursor !== null && from === null) throw invalidCursor(page.cursor);
  if (offset !== null && offset > 0) {
    // An offset is a position found from the stored pages' item counts; past the end, an empty page.
    const at = await itemAtOffset(store.db, job, offset);
    if (!at) return { itemsJson: '', nextCursor: null };
    return itemsFrom(store, job, at, page.limit, '');
  }
  return itemsFrom(store, job, from, page.limit, page.cursor ?? '');
}

async function itemsFrom(
  store: ResultAccess,
  job: Parameters<typeof resultItemsPage>[1],
  from: ItemPosition | null,
  limit: number,
  cursor: string,
): Promise<JobItems> {
  const read = await resultItemsPage(store, job, from, limit);
  if (!read) throw invalidCursor(cursor);
  return { itemsJson: read.itemsJson, nextCursor: read.next ? encodeItemCursor(read.next) : null };
}
