import { sql } from 'kysely';
import { jsonRows } from '@sdx/db';
import type { Resources, ResultObjects } from '../resources';
import { deleteObjectsQuietly } from './result-pages';
import { bucketOf, partOf } from './result-objects';

/**
 * Moves stored results between the stores (`npm run admin -- move-results --to s3|postgres`)
 * while the service runs. Only completed jobs' pages move (a running job's pages may still be
 * rewritten), a job's pages together, `batch` jobs at a time:
 * - to s3: each page's items are read as Postgres writes them, written as an object, and then
 *   the row is switched to the object (items dropped) only if it still holds those items; an
 *   object whose row went meanwhile (retention) is deleted again;
 * - to postgres: each object's items go back into the row, which is switched only if it still
 *   names that object; the objects are deleted after the commit.
 * What has moved no longer matches, so a move stopped anywhere (a crash, Ctrl-C) is resumed by
 * running it again; an object written just before a crash is an orphan the sweeper deletes.
 */

export type ResultStoreName = 'postgres' | 's3';

export interface MoveProgress {
  /** Jobs whose results were to move when the move started. */
  total: number;
  moved: number;
  pages: number;
  bytes: number;
}

type Mover = Pick<Resources, 'db' | 'resultObjects' | 'log'>;

/** Completed jobs with pages in the other store than `to`: how many, and the next `limit` of them after `after`. */
function pendingJobs(services: Mover, to: ResultStoreName) {
  const inOther = to === 's3' ? sql<boolean>`p.items is not null and p.item_count > 0` : sql<boolean>`p.object_key is not null`;
  return {
    count: async () => {
      const { rows } = await sql<{ n: number }>`
        select count(distinct p.job_id)::int as n from job_result_pages p join jobs j on j.id = p.job_id
        where j.status = 'completed' and ${inOther}`.execute(services.db);
      return rows[0].n;
    },
    next: async (after: string, limit: number) => {
      const { rows } = await sql<{ job_id: string }>`
        select distinct p.job_id from job_result_pages p join jobs j on j.id = p.job_id
        where j.status = 'completed' and ${inOther} and p.job_id > ${after}
        order by p.job_id limit ${limit}`.execute(services.db);
      return rows.map((row) => row.job_id);
    },
  };
}

export async function moveResults(
  services: Mover,
  to: ResultStoreName,
  options: { batch?: number; onProgress?: (progress: MoveProgress) => void; signal?: AbortSignal } = {},
): Promise<MoveProgress> {
  const bucket = bucketOf(services);
  const pending = pendingJobs(services, to);
  const progress: MoveProgress = { total: await pending.count(), moved: 0, pages: 0, bytes: 0 };
  options.onProgress?.(progress);
  let after = '';
  for (;;) {
    if (options.signal?.aborted) break;
    const jobs = await pending.next(after, options.batch ?? 50);
    if (jobs.length === 0) break;
    for (const jobId of jobs) {
      const moved = to === 's3' ? await moveJobToObjects(services, bucket, jobId) : await moveJobToRows(services, bucket, jobId);
      progress.moved += 1;
      progress.pages += moved.pages;
      progress.bytes += moved.bytes;
    }
    after = jobs[jobs.length - 1]!;
    options.onProgress?.(progress);
  }
  return progress;
}

async function moveJobToObjects(services: Mover, bucket: ResultObjects, jobId: string): Promise<{ pages: number; bytes: number }> {
  // Each page's hash once (materialized), not once per item: a 1,000-item page would hash its items 1,000 times.
  const { rows: lines } = await sql<{ page_no: number; line: string; hash: string }>`
    with p as materialized (
      select page_no, items, md5(items::text) as hash from job_result_pages
      where job_id = ${jobId} and items is not null and item_count > 0
    )
    select p.page_no, e.value::text as line, p.hash
    from p cross join lateral jsonb_array_elements(p.items) with ordinality as e(value, n)
    order by p.page_no, e.n`.execute(services.db);
  const pages = new Map<number, { lines: string[]; hash: string }>();
  for (const row of lines) {
    const page = pages.get(row.page_no) ?? { lines: [], hash: row.hash };
    page.lines.push(row.line);
    pages.set(row.page_no, page);
  }
  const written = [];
  for (const [pageNo, page] of pages) {
    const stored = await bucket.put(jobId, pageNo, page.lines);
    written.push({ page_no: pageNo, hash: page.hash, object_key: stored.key, stored_bytes: stored.bytes });
  }
  if (written.length === 0) return { pages: 0, bytes: 0 };
  const { rows: switched } = await sql<{ object_key: string }>`
    update job_result_pages p set items = null, object_key = v.object_key, stored_bytes = v.stored_bytes
    from ${jsonRows(written, 'page_no int, hash text, object_key text, stored_bytes int')} as v
    where p.job_id = ${jobId} and p.page_no = v.page_no and p.items is not null and md5(p.items::text) = v.hash
    returning p.object_key`.execute(services.db);
  const kept = new Set(switched.map((row) => row.object_key));
  await deleteObjectsQuietly(
    services,
    written.filter((w) => !kept.has(w.object_key)).map((w) => w.object_key),
  );
  return { pages: switched.length, bytes: written.filter((w) => kept.has(w.object_key)).reduce((n, w) => n + w.stored_bytes, 0) };
}

async function moveJobToRows(services: Mover, bucket: ResultObjects, jobId: string): Promise<{ pages: number; bytes: number }> {
  const objects = await services.db
    .selectFrom('job_result_pages')
    .select(['page_no', 'object_key', 'object_offset', 'stored_bytes'])
    .where('job_id', '=', jobId)
    .where('object_key', 'is not', null)
    .orderBy('page_no')
    .execute();
  let pages = 0;
  let bytes = 0;
  const moved: string[] = [];
  for (const page of objects) {
    const key = page.object_key!;
    const lines = await bucket.lines(key, partOf(page));
    const text = `[${lines.join(', ')}]`;
    const result = await services.db
      .updateTable('job_result_pages')
      .set({ items: sql<string>`${text}::jsonb`, object_key: null, object_offset: null, stored_bytes: null })
      .where('job_id', '=', jobId)
      .where('page_no', '=', page.page_no)
      .where('object_key', '=', key)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) > 0) {
      pages += 1;
      bytes += Buffer.byteLength(text);
      moved.push(key);
    }
  }
  await deleteObjectsQuietly(services, moved);
  return { pages, bytes };
}
