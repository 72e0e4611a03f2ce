import { type Kysely, sql } from 'kysely';

/**
 * jobs.request_id: the X-Request-ID of the request that admitted the job (the schedule run's ID
 * for a scheduled occurrence), so every log line the worker writes about the job carries it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table jobs add column request_id text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table jobs drop column if exists request_id`.execute(db);
}
