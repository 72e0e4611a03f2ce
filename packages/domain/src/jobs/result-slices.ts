import { sql } from 'kysely';
import type { Executor, JobRow } from '@sdx/db';
import { StoreUnavailable } from '@sdx/storage';
import type { ResultObjects } from '../resources';
import { ObjectPages, type PageCount, type Slice } from './result-object-pages';

/**
 * How a stored result is cut for reading (results.ts): its pages' item counts (one small
 * query), the slices of at most so many items they make, and each slice's items, cut out of
 * its pages by Postgres (sliceQuery) or read from the page objects (ObjectPages) when the
 * result is in the object store.
 */

/** What reading a result needs: the database, and the result bucket where pages are objects. */
export interface ResultAccess {
  db: Executor;
  resultObjects?: ResultObjects;
}

/** The job whose pages hold a job's result: its own, or for a cached job the one it reuses. */
export function resultSourceId(job: Pick<JobRow, 'id' | 'source_job_id'>): string {
  return job.source_job_id ?? job.id;
}

/**
 * Items per slice of a read. A slice's text stays well under V8's large-object size (128 KB),
 * so the strings of a read are short-lived young objects, not large ones that only a full
 * collection frees: 90 slow readers then cost the API little memory (bench/heavy-reads.ts).
 */
export const RESULT_SLICE_ITEMS = 100;

/** The columns a PageCount is read from. */
export const PAGE_COUNT = ['page_no', 'item_count', 'object_key', 'object_offset', 'stored_bytes'] as const;

/**
 * The page counts of several jobs' results in one small query, by the job whose pages they are
 * (resultSourceId): a list of jobs reads them at once instead of one query per job.
 */
export async function pageCountsOf(
  db: Executor,
  jobs: ReadonlyArray<Pick<JobRow, 'id' | 'source_job_id'>>,
): Promise<Map<string, PageCount[]>> {
  const sources = [...new Set(jobs.map(resultSourceId))];
  const out = new Map<string, PageCount[]>(sources.map((id) => [id, []]));
  if (sources.length === 0) return out;
  const rows = await db
    .selectFrom('job_result_pages')
    .select(['job_id', ...PAGE_COUNT])
    .where('job_id', 'in', sources)
    .orderBy('job_id')
    .orderBy('page_no')
    .execute();
  for (const { job_id, ...page } of rows) out.get(job_id)!.push(page);
  return out;
}

/** The pages of a result, in order: numbers, item counts and object keys (one small query). */
export function pagesOf(db: Executor, sourceId: string): Promise<PageCount[]> {
  return db.selectFrom('job_result_pages').select(PAGE_COUNT).where('job_id', '=', sourceId).orderBy('page_no').execute();
}

/** The result's slices of at most `maxItems` items, from the pages' item counts. */
export function slicesOf(pages: readonly PageCount[], maxItems: number): Slice[] {
  const slices: Slice[] = [];
  let open: Slice | null = null;
  let items = 0;
  for (const page of pages) {
    for (let at = 0; at < page.item_count;) {
      if (!open) {
        open = { first: page.page_no, from: at, last: page.page_no, to: at };
        items = 0;
      }
      const take = Math.min(maxItems - items, page.item_count - at);
      open.last = page.page_no;
      open.to = at + take - 1;
      items += take;
      at += take;
      if (items >= maxItems) {
        slices.push(open);
        open = null;
      }
    }
  }
  if (open) slices.push(open);
  return slices;
}

/**
 * One slice's pages, each as the jsonb array of its items in the slice: the whole page, or a
 * part of it cut out by Postgres (jsonb_path_query_array), so no more than the slice is sent.
 */
export function sliceQuery(db: Executor, sourceId: string, slice: Slice) {
  const part = sql`jsonb_path_query_array(p.items, ('$[' || (case when p.page_no = ${slice.first} then ${slice.from}::int else 0 end)
        || ' to ' || (case when p.page_no = ${slice.last} then ${slice.to}::int else p.item_count - 1 end) || ']')::jsonpath)`;
  const whole = sql<boolean>`(p.page_no > ${slice.first} or ${slice.from}::int = 0) and (p.page_no < ${slice.last} or ${slice.to}::int = p.item_count - 1)`;
  return db
    .selectFrom('job_result_pages as p')
    .where('p.job_id', '=', sourceId)
    .where('p.page_no', '>=', slice.first)
    .where('p.page_no', '<=', slice.last)
    .orderBy('p.page_no')
    .select(['p.page_no', sql<unknown>`case when ${whole} then p.items else ${part} end`.as('items')]);
}

/**
 * A slice's items as JSON text as Postgres writes them, comma-separated, without brackets ('' when
 * empty): within a page `, ` (jsonb's separator), between pages `,`.
 */
export async function sliceText(db: Executor, sourceId: string, slice: Slice, objects: ObjectPages | null): Promise<string> {
  if (objects) {
    return (await objects.slice(slice))
      .filter((lines) => lines.length > 0)
      .map((lines) => lines.join(', '))
      .join(',');
  }
  const rows = await db
    .selectFrom(sliceQuery(db, sourceId, slice).as('s'))
    .select(sql<string>`s.items::text`.as('text'))
    .orderBy('s.page_no')
    .execute();
  if (rows.some((row) => row.text === null)) throw movedWhileRead();
  // jsonb's text of an array is "[...]": its inside is the items, comma-separated.
  return rows
    .map((row) => row.text.slice(1, -1))
    .filter((inside) => inside.length > 0)
    .join(',');
}

/** The number of items of a slice. */
export function sliceSize(pages: readonly PageCount[], slice: Slice): number {
  let n = 0;
  for (const page of pages) {
    if (page.page_no < slice.first || page.page_no > slice.last || page.item_count === 0) continue;
    n += (page.page_no === slice.last ? slice.to : page.item_count - 1) - (page.page_no === slice.first ? slice.from : 0) + 1;
  }
  return n;
}

/** A page read from its row was moved to the object store (move-results) during the read: the read is retried. */
export function movedWhileRead(): StoreUnavailable {
  return new StoreUnavailable('The result moved to the object store while it was read; retry.');
}

/** The reader of a result's objects, or null when none of its pages is one. */
export function objectPages(store: ResultAccess, sourceId: string, pages: readonly PageCount[]): ObjectPages | null {
  if (!pages.some((page) => page.object_key !== null)) return null;
  return new ObjectPages(store.db, store.resultObjects, sourceId, new Map(pages.map((page) => [page.page_no, page])));
}
