import { sql } from 'kysely';
import type { Executor, JobRow } from '@sdx/db';
import type { PageCount, Slice } from './result-object-pages';
import {
  movedWhileRead,
  objectPages,
  PAGE_COUNT,
  pageCountsOf,
  pagesOf,
  RESULT_SLICE_ITEMS,
  type ResultAccess,
  resultSourceId,
  sliceQuery,
  sliceSize,
  slicesOf,
  sliceText,
} from './result-slices';

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

/** The result's items in slices of at most `maxItems`, in order. */
export async function* resultPages(
  store: ResultAccess,
  job: Pick<JobRow, 'id' | 'source_job_id'>,
  maxItems = RESULT_SLICE_ITEMS,
): AsyncGenerator<unknown[]> {
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
    yield rows.length === 1 ? (rows[0].items as unknown[]) : rows.flatMap((row) => row.items as unknown[]);
  }
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
export async function resultItemsPage(
  store: ResultAccess,
  job: Pick<JobRow, 'id' | 'source_job_id'>,
  from: ItemPosition | null,
  limit: number,
): Promise<ItemsPage | null> {
  const { db } = store;
  const sourceId = resultSourceId(job);
  const pages = await itemsPageCounts(db, sourceId, from, limit);
  const start = from ?? { page: pages[0]?.page_no ?? 0, index: 0 };
  if (pages.length === 0) return from ? null : { itemsJson: '', next: null };
  if (pages[0].page_no !== start.page || start.index >= pages[0].item_count) return null;
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
export async function* resultJson(
  store: ResultAccess,
  job: Pick<JobRow, 'id' | 'source_job_id' | 'include_posts'>,
  counts?: PageCount[],
): AsyncGenerator<string> {
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
export async function resultsOf(
  store: ResultAccess,
  jobs: ReadonlyArray<Pick<JobRow, 'id' | 'source_job_id'>>,
): Promise<Map<string, unknown[]>> {
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
