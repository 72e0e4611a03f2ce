import { type Kysely, sql } from 'kysely';

/**
 * credit_reservations_held_idx (workspace_id, where status = 'held') is read by no query: a
 * reservation is settled or released by its job_id (unique), and a workspace's reserved totals
 * live on its balance row. It cost an index entry per admission, and, because `status` is in
 * its predicate, it made every settlement and release a non-HOT update (new entries in the
 * primary key and the job_id index too). Without it, most of them are HOT.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists credit_reservations_held_idx`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`create index if not exists credit_reservations_held_idx on credit_reservations (workspace_id) where status = 'held'`.execute(
    db,
  );
}
