import { type Kysely, sql } from 'kysely';

/**
 * Which deployment admitted each job, when its queue entry was last added, and the priority
 * that entry carries:
 * - jobs.deployment: the DEPLOYMENT_ID (by default the REDIS_PREFIX) of the process that
 *   admitted it. A reconciler re-queues and recovers only the jobs of its own deployment, so
 *   two deployments sharing a database never take over each other's work. Null for jobs
 *   admitted before the column existed: the first reconciler to touch one adopts it.
 * - jobs.enqueued_at: when the job's queue entry was last added (admission, retry, reconciler).
 *   The reconcilers split a backlog between them by claiming rows whose mark is old (FOR
 *   UPDATE SKIP LOCKED) and moving the mark on; the epoch (1970) marks an add that failed.
 * - jobs.queue_priority: the job's rank among its workspace's active jobs at admission, the
 *   priority of its queue entries (round robin across workspaces).
 * The reconciler's index replaces jobs_queued_idx, which only the reconciler read.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table jobs add column deployment text`.execute(db);
  await sql`alter table jobs add column enqueued_at timestamptz not null default now()`.execute(db);
  await sql`alter table jobs add column queue_priority integer not null default 1`.execute(db);
  await sql`drop index if exists jobs_queued_idx`.execute(db);
  await sql`create index jobs_reconcile_idx on jobs (deployment, enqueued_at) where status = 'queued'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists jobs_reconcile_idx`.execute(db);
  await sql`create index if not exists jobs_queued_idx on jobs (next_attempt_at) where status = 'queued'`.execute(db);
  await sql`alter table jobs drop column if exists queue_priority`.execute(db);
  await sql`alter table jobs drop column if exists enqueued_at`.execute(db);
  await sql`alter table jobs drop column if exists deployment`.execute(db);
}
