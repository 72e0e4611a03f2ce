import { sql } from 'kysely';
import type { Executor, JobRow } from '@sdx/db';

/**
 * Results are stored page by page (job_result_pages) as the provider delivers them (see the
 * job-state module's saveProgress and completeJobs), so a long job checkpoints its progress and a
 * 25,000-item result never sits in one row. Reads go the same way: in keyset slices of pages of
 * about RESULT_SLICE_ITEMS items (at least one page), each fetched only once the one before has
 * been handed on, so a reader (a slow client behind it) holds one slice, never the whole result.
 * Pipeline mode refuses cursors, hence keyset slices rather than a streamed query.
 * A cached job reads the pages of the job it reuses (source_job_id).
 */
export function resultSourceId(job: Pick<JobRow, 'id' | 'source_job_id'>): string {
  return job.source_job_id ?? job.id;
}

/** Items per slice of a read, about (a slice is whole pages, at least one). */
export const RESULT_SLICE_ITEMS = 500;

/** Consecutive pages [from, to] of about `maxItems` items each, from the pages' item counts. */
async function sliceBounds(db: Executor, sourceId: string, maxItems: number): Promise<Array<[number, number]>> {
  const pages = await db.selectFrom('job_result_pages').select(['page_no', 'item_count']).where('job_id', '=', sourceId).orderBy('page_no').execute();
  const slices: Array<[number, number]> = [];
  let start: number | null = null;
  let end = 0;
  let items = 0;
  for (const page of pages) {
    if (start !== null && items + page.item_count > maxItems) {
      slices.push([start, end]);
      start = null;
      items = 0;
    }
    start ??= page.page_no;
    end = page.page_no;
    items += page.item_count;
  }
  if (start !== null) slices.push([start, end]);
  return slices;
}

/** The result's items in slices of about `maxItems`, in order. */
export async function* resultPages(db: Executor, job: Pick<JobRow, 'id' | 'source_job_id'>, maxItems = RESULT_SLICE_ITEMS): AsyncGenerator<unknown[]> {
  const sourceId = resultSourceId(job);
  for (const [from, to] of await sliceBounds(db, sourceId, maxItems)) {
    const rows = await db
      .selectFrom('job_result_pages')
      .select('items')
      .where('job_id', '=', sourceId)
      .where('page_no', '>=', from)
      .where('page_no', '<=', to)
      .orderBy('page_no')
      .execute();
    yield rows.length === 1 ? (rows[0]!.items as unknown[]) : rows.flatMap((row) => row.items as unknown[]);
  }
}

/**
 * The result's items as JSON text, in slices of about `maxItems`: each slice is the items of its
 * pages as Postgres writes them, separated by commas, without the array's brackets (empty
 * slices are skipped). Nothing is parsed or serialised again on the way.
 */
export async function* resultItemsJson(db: Executor, job: Pick<JobRow, 'id' | 'source_job_id'>, maxItems = RESULT_SLICE_ITEMS): AsyncGenerator<string> {
  const sourceId = resultSourceId(job);
  for (const [from, to] of await sliceBounds(db, sourceId, maxItems)) {
    const rows = await db
      .selectFrom('job_result_pages')
      .select(sql<string>`items::text`.as('items'))
      .where('job_id', '=', sourceId)
      .where('page_no', '>=', from)
      .where('page_no', '<=', to)
      .orderBy('page_no')
      .execute();
    // jsonb's text of an array is "[...]": its inside is the items, comma-separated.
    const parts = rows.map((row) => row.items.slice(1, -1)).filter((inside) => inside.length > 0);
    if (parts.length > 0) yield parts.join(',');
  }
}

/**
 * A job's result as JSON text chunks, as GET /v1/jobs/{id} shows it: a list, streamed slice by
 * slice, or {profile, posts} for a bundle (one profile and at most a few hundred posts,
 * assembled whole).
 */
export async function* resultJson(db: Executor, job: Pick<JobRow, 'id' | 'source_job_id' | 'include_posts'>): AsyncGenerator<string> {
  if (job.include_posts > 0) {
    yield JSON.stringify(await loadResult(db, job));
    return;
  }
  yield '[';
  let first = true;
  for await (const items of resultItemsJson(db, job)) {
    yield first ? items : `,${items}`;
    first = false;
  }
  yield ']';
}

export type JobResult = unknown[] | { profile: unknown; posts: unknown[] };

/** The result payload of a completed job, whole: a list of items, or {profile, posts} for a bundle (small results only). */
export async function loadResult(db: Executor, job: Pick<JobRow, 'id' | 'source_job_id' | 'include_posts'>): Promise<JobResult> {
  const items: unknown[] = [];
  for await (const page of resultPages(db, job)) {
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
