import { type Kysely, sql } from 'kysely';

/**
 * The live sources each attempt of a job tried (issue 38, run-time fallback): one row per source
 * tried, in order (`seq`), with how it ended (`served`, or `failed` with the job error code).
 * Written only for attempts on a live source (the sandbox writes none). GET /v1/jobs/{id}
 * shows them as `attempt_sources`; the index by adapter and time is what a source's error rate
 * over the last 15 minutes is read from.
 *
 * source_health: one row per live adapter, shared by every worker: its last success and
 * failure, its authentication failures in a row (10 mark it down, `down_since`, until an
 * attempt on it succeeds), and its quota as the last attempt saw it (what is left where the
 * platform says so; what today's requests cost where the platform publishes costs, `quota_day`
 * in Pacific time as YouTube's day).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table job_attempt_sources (
      job_id text not null references jobs (id) on delete cascade,
      attempt integer not null,
      seq integer not null,
      source text not null check (source in ('official', 'vendor')),
      provider text not null,
      outcome text not null check (outcome in ('served', 'failed')),
      error_code text,
      created_at timestamptz not null default now(),
      primary key (job_id, attempt, seq)
    )`.execute(db);
  await sql`create index job_attempt_sources_provider on job_attempt_sources (provider, created_at)`.execute(db);

  await sql`
    create table source_health (
      provider text primary key,
      source text not null check (source in ('official', 'vendor')),
      last_success_at timestamptz,
      last_failure_at timestamptz,
      auth_failures integer not null default 0,
      down_since timestamptz,
      quota_unit text,
      quota_remaining bigint,
      quota_limit bigint,
      quota_day date,
      quota_used bigint not null default 0,
      updated_at timestamptz not null default now()
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists source_health`.execute(db);
  await sql`drop table if exists job_attempt_sources`.execute(db);
}
