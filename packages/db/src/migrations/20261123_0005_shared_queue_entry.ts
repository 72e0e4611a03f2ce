import { type Kysely, sql } from 'kysely';

/**
 * jobs.queue_entry: the queue entry that carries the job's first attempt when several jobs
 * admitted together share one (see planEntries in @sdx/queue). Null when the job has an entry
 * of its own, whose ID is derived from the job ID. The reconciler re-adds a shared entry under
 * this ID, which is a no-op while the entry still waits in the queue.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table jobs add column queue_entry text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table jobs drop column if exists queue_entry`.execute(db);
}
