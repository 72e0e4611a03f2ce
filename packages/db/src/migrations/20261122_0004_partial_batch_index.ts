import { type Kysely, sql } from 'kysely';

/**
 * jobs_batch_idx (batch_id, batch_position) held an entry for every job, single jobs included
 * (batch_id null), and every new version of a job row adds one: a single job paid three
 * entries that no query reads (at admission, claim and completion). Every lookup by batch has
 * `batch_id = …`, which implies `batch_id is not null`, so the partial index serves them all.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index jobs_batch_children_idx on jobs (batch_id, batch_position) where batch_id is not null`.execute(db);
  await sql`drop index if exists jobs_batch_idx`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`create index if not exists jobs_batch_idx on jobs (batch_id, batch_position)`.execute(db);
  await sql`drop index if exists jobs_batch_children_idx`.execute(db);
}
