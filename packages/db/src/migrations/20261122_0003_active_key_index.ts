import { type Kysely, sql } from 'kysely';

/**
 * jobs_active_idx (workspace_id, partial on queued/running) duplicated the leading column of
 * jobs_active_key_idx (workspace_id, request_key, same predicate). Being smaller, it was the
 * planner's pick for the deduplication lookup too, which then read every active job of the
 * workspace to find one request key: admission cost grew with the workspace's queue. The
 * active-job count reads jobs_active_key_idx just as well.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists jobs_active_idx`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`create index if not exists jobs_active_idx on jobs (workspace_id) where status in ('queued', 'running')`.execute(db);
}
