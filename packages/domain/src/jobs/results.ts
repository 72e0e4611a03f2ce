import type { Executor, JobRow } from '@sdx/db';

/**
 * Results are stored page by page (job_result_pages) as the provider delivers them (see the
 * job-state module's saveProgress and completeJobs), so a long job checkpoints its progress and a 25,000-item result never sits in one row or in memory.
 * A cached job reads the pages of the job it reuses (source_job_id).
 */
export function resultSourceId(job: Pick<JobRow, 'id' | 'source_job_id'>): string {
  return job.source_job_id ?? job.id;
}

/** Pages of items in order, fetched a few pages at a time. */
export async function* resultPages(db: Executor, job: Pick<JobRow, 'id' | 'source_job_id'>, pagesPerFetch = 10): AsyncGenerator<unknown[]> {
  const sourceId = resultSourceId(job);
  let after = 0;
  for (;;) {
    const rows = await db
      .selectFrom('job_result_pages')
      .select(['page_no', 'items'])
      .where('job_id', '=', sourceId)
      .where('page_no', '>', after)
      .orderBy('page_no')
      .limit(pagesPerFetch)
      .execute();
    for (const row of rows) yield row.items as unknown[];
    if (rows.length < pagesPerFetch) return;
    after = rows[rows.length - 1]!.page_no;
  }
}

export type JobResult = unknown[] | { profile: unknown; posts: unknown[] };

/** The result payload of a completed job: a list of items, or {profile, posts} for a bundle. */
export async function loadResult(db: Executor, job: Pick<JobRow, 'id' | 'source_job_id' | 'include_posts'>): Promise<JobResult> {
  const items: unknown[] = [];
  for await (const page of resultPages(db, job, 50)) {
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

/** Loads the results of several jobs in one query (list endpoints). */
export async function loadResults(db: Executor, jobs: Array<Pick<JobRow, 'id' | 'source_job_id' | 'include_posts' | 'status'>>): Promise<Map<string, JobResult>> {
  const completed = jobs.filter((j) => j.status === 'completed');
  const out = new Map<string, JobResult>();
  if (completed.length === 0) return out;
  const sources = Array.from(new Set(completed.map(resultSourceId)));
  const rows = await db
    .selectFrom('job_result_pages')
    .select(['job_id', 'page_no', 'items'])
    .where('job_id', 'in', sources)
    .orderBy('job_id')
    .orderBy('page_no')
    .execute();
  const bySource = new Map<string, unknown[]>();
  for (const row of rows) {
    const list = bySource.get(row.job_id) ?? [];
    for (const item of row.items as unknown[]) list.push(item);
    bySource.set(row.job_id, list);
  }
  for (const job of completed) {
    out.set(job.id, assemble(bySource.get(resultSourceId(job)) ?? [], job.include_posts));
  }
  return out;
}
