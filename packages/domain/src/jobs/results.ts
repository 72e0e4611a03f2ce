import { sql } from 'kysely';
import type { Executor, JobRow } from '@sdx/db';
import { StoreUnavailable } from '@sdx/storage';
import type { ResultObjects } from '../resources';
import { ObjectPages, type PageCount, type Slice } from './result-object-pages';

export type { PageCount } from './result-object-pages';

/**
 * Results are stored page by page (job_result_pages) as the provider delivers them (see the
 * job-state module's saveProgress and completeJobs), so a long job checkpoints its progress and a
 * 25,000-item result never sits in one row. Reads go the same way: in keyset slices of
 * RESULT_SLICE_ITEMS items (page number and position), each fetched only once the one before
 * has been handed on, so a reader (a slow client behind it) holds one slice, never the result.
 * Pipeline mode refuses cursors, hence keyset slices rather than a streamed query.
 * A cached job reads the pages of the job it reuses (source_job_id).
 *
 * A page's items are in its row, or (RESULT_STORE=s3) in an object of the result bucket
 * (result-objects.ts) holding each item's text as Postgres writes it: a result in objects is read
 * a page object at a time (the last one kept while its slices are handed on), and answers the
 * same bytes as from rows.
 */

/** What reading a result needs: the database, and the result bucket where pages are objects. */
export interface ResultAccess {
  db: Executor;
  resultObjects?: ResultObjects;
}
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
const PAGE_COUNT = ['page_no', 'item_count', 'object_key', 'object_offset', 'stored_bytes'] as const;

/**
 * The page counts of several jobs' results in one small query, by the job whose pages they are
 * (resultSourceId): a list of jobs reads them at once instead of one query per job.
 */
export async function pageCountsOf(db: Executor, jobs: ReadonlyArray<Pick<JobRow, 'id' | 'source_job_id'>>): Promise<Map<string, PageCount[]>> {
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
function pagesOf(db: Executor, sourceId: string): Promise<PageCount[]> {
  return db.selectFrom('job_result_pages').select(PAGE_COUNT).where('job_id', '=', sourceId).orderBy('page_no').execute();
}

/** The result's slices of at most `maxItems` items, from the pages' item counts. */
function slicesOf(pages: readonly PageCount[], maxItems: number): Slice[] {
  const slices: Slice[] = [];
  let open: Slice | null = null;
  let items = 0;
  for (const page of pages) {
    for (let at = 0; at < page.item_count; ) {
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
function sliceQuery(db: Executor, sourceId: string, slice: Slice) {
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

/** The result's items in slices of at most `maxItems`, in order. */
export async function* resultPages(store: ResultAccess, job: Pick<JobRow, 'id' | 'source_job_id'>, maxItems = RESULT_SLICE_ITEMS): AsyncGenerator<unknown[]> {
  const { db } = store;
  const sourceId = resultSourceId(job);
  const pages = await pagesOf(db, sourceId);
  const objects = objectPages(store, sourceId, pages);
  for (const slice of slicesOf(pages, maxItems)) {
    if (objects) {
      yield (await objects.slice(slice)).flat().map((line) => JSON.parse(line) as unknown);
      continue;
    }
    const rows = await sliceQuery(db, sourceId, slice).execute();
    if (rows.some((row) => row.items === null)) throw movedWhileRead();
    yield rows.length === 1 ? (rows[0]!.items as unknown[]) : rows.flatMap((row) => row.items as unknown[]);
  }
}

/**
 * A slice's items as JSON text as Postgres writes them, comma-separated, without brackets ('' when
 * empty): within a page `, ` (jsonb's separator), between pages `,`.
 */
async function sliceText(db: Executor, sourceId: string, slice: Slice, objects: ObjectPages | null): Promise<string> {
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

/**
 * The result's items as JSON text, in slices of at most `maxItems`: the items as Postgres
 * writes them, separated by commas, without the array's brackets. Nothing is parsed or
 * serialised again on the way.
 */
export async function* resultItemsJson(
  store: ResultAccess,
  job: Pick<JobRow, 'id' | 'source_job_id'>,
  maxItems = RESULT_SLICE_ITEMS,
  counts?: PageCount[],
): AsyncGenerator<string> {
  const sourceId = resultSourceId(job);
  const pages = counts ?? (await pagesOf(store.db, sourceId));
  const objects = objectPages(store, sourceId, pages);
  for (const slice of slicesOf(pages, maxItems)) {
    const text = await sliceText(store.db, sourceId, slice, objects);
    if (text.length > 0) yield text;
  }
}

/**
 * The result's items one per line (NDJSON), in slices of at most `maxItems`: each item's JSON
 * text as Postgres writes it (one row per item, jsonb_array_elements), each line ended by \n.
 * `wrap` turns an item's text into its line (a batch export adds the child's job_id and target).
 */
export async function* resultItemLines(
  store: ResultAccess,
  job: Pick<JobRow, 'id' | 'source_job_id'>,
  wrap: (item: string) => string = (item) => item,
  maxItems = RESULT_SLICE_ITEMS,
): AsyncGenerator<string> {
  const { db } = store;
  const sourceId = resultSourceId(job);
  const pages = await pagesOf(db, sourceId);
  const objects = objectPages(store, sourceId, pages);
  for (const slice of slicesOf(pages, maxItems)) {
    if (objects) {
      const lines = (await objects.slice(slice)).flat();
      if (lines.length > 0) yield `${lines.map(wrap).join('\n')}\n`;
      continue;
    }
    const { rows } = await sql<{ line: string }>`
      select e.value::text as line
      from (${sliceQuery(db, sourceId, slice)}) s
      cross join lateral jsonb_array_elements(s.items) with ordinality as e(value, n)
      order by s.page_no, e.n
    `.execute(db);
    if (rows.length !== sliceSize(pages, slice)) throw movedWhileRead();
    if (rows.length > 0) yield `${rows.map((row) => wrap(row.line)).join('\n')}\n`;
  }
}

/** Where an item of a result sits: its page and its 0-based index in the page. */
export interface ItemPosition {
  page: number;
  index: number;
}

/** One page of GET /v1/jobs/{id}/items: its items as JSON text (comma-separated), and where the next page starts. */
export interface ItemsPage {
  itemsJson: string;
  next: ItemPosition | null;
}

/**
 * The counts of the stored pages a page of `limit` items from `from` spans, and of the page its
 * next item is on: no more. Pages are cut where the items before them (from `from`'s index on)
 * reach `limit`, in Postgres, so a 1,000-item page of a result stored 20 items a page reads 51
 * page rows, not 1,001. Each page holds an item at least, so limit + 1 rows bound the scan.
 */
async function itemsPageCounts(db: Executor, sourceId: string, from: ItemPosition | null, limit: number): Promise<PageCount[]> {
  let inner = db.selectFrom('job_result_pages').select(PAGE_COUNT).where('job_id', '=', sourceId).where('item_count', '>', 0);
  if (from) inner = inner.where('page_no', '>=', from.page);
  const skip = from?.index ?? 0;
  const { rows } = await sql<PageCount>`
    select page_no, item_count, object_key, object_offset, stored_bytes
    from (
      select p.*, coalesce(sum(p.item_count) over (order by p.page_no rows between unbounded preceding and 1 preceding), 0) as before
      from (${inner.orderBy('page_no').limit(limit + 1)}) p
    ) w
    where w.before < ${skip + limit}::bigint + 1
    order by page_no
  `.execute(db);
  return rows;
}

/**
 * `limit` items of the result from `from` (the start when null), read in one slice: the item
 * counts of the pages it needs (empty pages, which a new_only job may keep, skipped), then the
 * items themselves, cut out of their pages by Postgres. Nothing before `from` or after the
 * slice is read. Null when `from` names no item of the result (a cursor not handed out here).
 */
export async function resultItemsPage(store: ResultAccess, job: Pick<JobRow, 'id' | 'source_job_id'>, from: ItemPosition | null, limit: number): Promise<ItemsPage | null> {
  const { db } = store;
  const sourceId = resultSourceId(job);
  const pages = await itemsPageCounts(db, sourceId, from, limit);
  const start = from ?? { page: pages[0]?.page_no ?? 0, index: 0 };
  if (pages.length === 0) return from ? null : { itemsJson: '', next: null };
  if (pages[0]!.page_no !== start.page || start.index >= pages[0]!.item_count) return null;
  const slice: Slice = { first: start.page, from: start.index, last: start.page, to: start.index };
  let taken = 0;
  let next: ItemPosition | null = null;
  for (const [k, page] of pages.entries()) {
    const at = k === 0 ? start.index : 0;
    if (taken === limit) {
      next = { page: page.page_no, index: at };
      break;
    }
    const take = Math.min(limit - taken, page.item_count - at);
    slice.last = page.page_no;
    slice.to = at + take - 1;
    taken += take;
    if (taken === limit && at + take < page.item_count) {
      next = { page: page.page_no, index: at + take };
      break;
    }
  }
  return { itemsJson: await sliceText(db, sourceId, slice, objectPages(store, sourceId, pages)), next };
}

/**
 * A job's result as JSON text chunks, as GET /v1/jobs/{id} shows it: a list, streamed slice by
 * slice, or {profile, posts} for a bundle (one profile and at most a few hundred posts,
 * assembled whole). `counts`, when read already (pageCountsOf), spares a query.
 */
export async function* resultJson(store: ResultAccess, job: Pick<JobRow, 'id' | 'source_job_id' | 'include_posts'>, counts?: PageCount[]): AsyncGenerator<string> {
  if (job.include_posts > 0) {
    yield JSON.stringify(await loadResult(store, job));
    return;
  }
  yield '[';
  let first = true;
  for await (const items of resultItemsJson(store, job, RESULT_SLICE_ITEMS, counts)) {
    yield first ? items : `,${items}`;
    first = false;
  }
  yield ']';
}

/** Items read per query when several results are read whole at once (resultsOf). */
const BULK_ITEMS = 5_000;
/** Results in the object store read at once by resultsOf. */
const BULK_OBJECT_READS = 8;

/**
 * Several jobs' results whole, by job id, in a few queries rather than two per job: the page
 * counts of all of them (pageCountsOf), then the items of the results kept in rows, many
 * results' pages per query (about BULK_ITEMS items each, one result never split). A result with
 * a page in the object store is read as resultPages reads it, BULK_OBJECT_READS at a time. For
 * results small enough to hold at once (a monitor run's results).
 */
export async function resultsOf(store: ResultAccess, jobs: ReadonlyArray<Pick<JobRow, 'id' | 'source_job_id'>>): Promise<Map<string, unknown[]>> {
  const out = new Map<string, unknown[]>();
  if (jobs.length === 0) return out;
  const counts = new Map<string, PageCount[]>();
  for (let i = 0; i < jobs.length; i += 1000) {
    for (const [id, pages] of await pageCountsOf(store.db, jobs.slice(i, i + 1000))) counts.set(id, pages);
  }
  const bySource = new Map<string, unknown[]>();
  const inObjects: string[] = [];
  let chunk: string[] = [];
  let chunkItems = 0;
  const readChunk = async () => {
    if (chunk.length === 0) return;
    const ids = chunk;
    chunk = [];
    chunkItems = 0;
    const rows = await store.db
      .selectFrom('job_result_pages')
      .select(['job_id', 'page_no', 'items'])
      .where('job_id', 'in', ids)
      .where('item_count', '>', 0)
      .orderBy('job_id')
      .orderBy('page_no')
      .execute();
    for (const row of rows) {
      if (row.items === null) throw movedWhileRead();
      const items = bySource.get(row.job_id)!;
      for (const item of row.items as unknown[]) items.push(item);
    }
  };
  for (const [sourceId, pages] of counts) {
    if (pages.some((page) => page.object_key !== null)) {
      inObjects.push(sourceId);
      continue;
    }
    bySource.set(sourceId, []);
    const items = pages.reduce((n, page) => n + page.item_count, 0);
    if (items === 0) continue;
    if (chunk.length > 0 && chunkItems + items > BULK_ITEMS) await readChunk();
    chunk.push(sourceId);
    chunkItems += items;
  }
  await readChunk();
  for (let i = 0; i < inObjects.length; i += BULK_OBJECT_READS) {
    await Promise.all(
      inObjects.slice(i, i + BULK_OBJECT_READS).map(async (sourceId) => {
        const items: unknown[] = [];
        for await (const page of resultPages(store, { id: sourceId, source_job_id: null })) for (const item of page) items.push(item);
        bySource.set(sourceId, items);
      }),
    );
  }
  for (const job of jobs) out.set(job.id, bySource.get(resultSourceId(job)) ?? []);
  return out;
}

export type JobResult = unknown[] | { profile: unknown; posts: unknown[] };

/** The result payload of a completed job, whole: a list of items, or {profile, posts} for a bundle (small results only). */
export async function loadResult(store: ResultAccess, job: Pick<JobRow, 'id' | 'source_job_id' | 'include_posts'>): Promise<JobResult> {
  const items: unknown[] = [];
  for await (const page of resultPages(store, job)) {
    for (const item of page) items.push(item);
  }
  return assemble(items, job.include_posts);
}

function assemble(items: unknown[], includePosts: number): JobResult {
  if (includePosts === 0) return items;
  const [first, ...rest] = items;
  const isProfile = (first as { kind?: string } | undefined)?.kind === 'profile';
  return { profile: isProfile ? first : null, posts: isProfile ? rest : items };
}

/** The number of items of a slice. */
function sliceSize(pages: readonly PageCount[], slice: Slice): number {
  let n = 0;
  for (const page of pages) {
    if (page.page_no < slice.first || page.page_no > slice.last || page.item_count === 0) continue;
    n += (page.page_no === slice.last ? slice.to : page.item_count - 1) - (page.page_no === slice.first ? slice.from : 0) + 1;
  }
  return n;
}

/** A page read from its row was moved to the object store (move-results) during the read: the read is retried. */
function movedWhileRead(): StoreUnavailable {
  return new StoreUnavailable('The result moved to the object store while it was read; retry.');
}

/** The reader of a result's objects, or null when none of its pages is one. */
function objectPages(store: ResultAccess, sourceId: string, pages: readonly PageCount[]): ObjectPages | null {
  if (!pages.some((page) => page.object_key !== null)) return null;
  return new ObjectPages(store.db, store.resultObjects, sourceId, new Map(pages.map((page) => [page.page_no, page])));
}
