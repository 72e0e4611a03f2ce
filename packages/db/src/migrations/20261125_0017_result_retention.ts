import { type Kysely, sql } from 'kysely';

/**
 * Result retention (extensions.md 9): results are deleted RESULT_RETENTION_DAYS after their job
 * finished, and the job row stays with `result_expired` set.
 * - jobs.result_expired: set by the purge on a completed job once its retention is over (it then
 *   shows `result` null and `result_expired` true). Failed and cancelled jobs keep no result
 *   (their pages go when they end), so the purge never needs them.
 * - jobs_retention_idx: the completed jobs whose result is still kept, by finish time; a job
 *   leaves it when its result expires, so it holds only the last RESULT_RETENTION_DAYS of jobs.
 * - jobs_source_idx: the cached jobs that read another job's pages (source_job_id), so that
 *   pages are deleted only once no job still within its retention reads them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table jobs add column result_expired boolean not null default false`.execute(db);
  await sql`create index jobs_retention_idx on jobs (finished_at) where status = 'completed' and not result_expired`.execute(db);
  await sql`create index jobs_source_idx on jobs (source_job_id) where source_job_id is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists jobs_source_idx`.execute(db);
  await sql`drop index if exists jobs_retention_idx`.execute(db);
  await sql`alter table jobs drop column if exists result_expired`.execute(db);
}
