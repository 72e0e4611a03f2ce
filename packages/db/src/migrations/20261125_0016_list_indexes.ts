import { type Kysely, sql } from 'kysely';

/**
 * The indexes of the paged, filtered lists (GET /v1/jobs, extensions.md 7). Lists are newest
 * first by ID, ordered by (workspace_id, id desc), and continue with `id < starting_after`
 * (domain paging.ts), so each filter has an index (workspace_id, <filter>, id desc): a page is
 * then read straight off the index, however many jobs the workspace has and however deep the
 * page. The unfiltered list reads jobs_workspace_idx (workspace_id, id desc), and the batch
 * filter the batch children's index (a batch has at most 100 children, sorted in memory).
 * - status: (workspace_id, status, id desc);
 * - platform: (workspace_id, platform, id desc);
 * - operation: (workspace_id, operation, id desc) (the same operation runs on several platforms);
 *   platform and operation together read the one of the two the planner finds more selective;
 * - schedule_id: (workspace_id, schedule_id, id desc), for the jobs schedules dispatched only.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index jobs_workspace_status_idx on jobs (workspace_id, status, id desc)`.execute(db);
  await sql`create index jobs_workspace_platform_idx on jobs (workspace_id, platform, id desc)`.execute(db);
  await sql`create index jobs_workspace_operation_idx on jobs (workspace_id, operation, id desc)`.execute(db);
  await sql`create index jobs_schedule_idx on jobs (workspace_id, schedule_id, id desc) where schedule_id is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists jobs_schedule_idx`.execute(db);
  await sql`drop index if exists jobs_workspace_operation_idx`.execute(db);
  await sql`drop index if exists jobs_workspace_platform_idx`.execute(db);
  await sql`drop index if exists jobs_workspace_status_idx`.execute(db);
}
