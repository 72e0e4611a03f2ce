import { type Kysely, sql } from 'kysely';

/** The scheduler's recovery step looks for runs claimed but never dispatched. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index schedule_runs_undispatched_idx on schedule_runs (created_at) where status = 'queued' and dispatched_at is null`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists schedule_runs_undispatched_idx`.execute(db);
}
