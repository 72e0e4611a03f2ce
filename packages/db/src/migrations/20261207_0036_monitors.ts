import { type Kysely, sql } from 'kysely';

/**
 * Monitors (extensions-3.md section 3):
 * - monitors: one operation over a list of targets on a recurrence (hourly, daily, weekly), who
 *   made it (`created_by_kind`, `created_by_id`: a user or an API key), paused with a reason.
 *   Soft-deleted as schedules are.
 * - monitor_runs: each occurrence (scheduled or manual). Its targets are dispatched as batches
 *   of at most 100 (of the targets and limit the run took when it was made), one after another as the workspace's active-job cap leaves room:
 *   `batch_ids` holds those created so far, `next_chunk` the first chunk not yet dispatched.
 *
 * - monitor_points: the series' points, only when a value changed. Partitioned by month on `at`
 *   (native range partitioning, decisions.md "Monitors"): each month's partition is created by
 *   the service before its first point (ensureMonthPartition), and retention drops whole months.
 *   `item_id` is '' for a profile's series, so the series key is never null. Its one index,
 *   monitor_points_series_idx, covers a series read: (workspace, monitor, target, metric, item,
 *   at) with the value included.
 * - monitor_series: each series' last point (what the next value is compared with), one row per
 *   (monitor, target, item, metric), so a run never scans the points themselves.
 *
 * - monitor_changes: what a completed run found changed (metric_changed, field_changed,
 *   new_item), listed newest first by id; item_id null for a profile's.
 * - monitor_fields: each target's last seen profile fields (display_name, bio, verified,
 *   private, url), what the next run's fields are compared with.
 * - monitor_items: the items each target has listed in any run, so a new item is told once.
 *
 * Additive: new tables only, which the previous release neither reads nor writes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table monitors (
      id text primary key,
      workspace_id text not null references workspaces (id),
      name text not null,
      platform text not null,
      operation text not null,
      targets jsonb not null,
      requested_limit integer not null,
      frequency text not null check (frequency in ('hourly', 'daily', 'weekly')),
      time_of_day text,
      day_of_week text,
      timezone text not null,
      status text not null check (status in ('active', 'paused')),
      paused_reason text,
      alerts jsonb not null default '[]'::jsonb,
      destination_id text,
      created_by_kind text check (created_by_kind in ('user', 'key')),
      created_by_id text,
      next_run_at timestamptz,
      last_run_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      deleted_at timestamptz
    )`.execute(db);
  await sql`create index monitors_workspace_list_idx on monitors (workspace_id, id desc) where deleted_at is null`.execute(db);
  await sql`create index monitors_due_idx on monitors (next_run_at) where status = 'active' and deleted_at is null`.execute(db);
  await sql`create index monitors_creator_idx on monitors (workspace_id, created_by_kind, created_by_id) where deleted_at is null`.execute(
    db,
  );
  await sql`
    create table monitor_runs (
      id text primary key,
      monitor_id text not null references monitors (id),
      workspace_id text not null,
      trigger text not null check (trigger in ('scheduled', 'manual')),
      scheduled_for timestamptz not null,
      targets jsonb not null,
      requested_limit integer not null,
      status text not null check (status in ('queued', 'running', 'completed', 'failed', 'skipped_credits')),
      batch_ids jsonb not null default '[]'::jsonb,
      next_chunk integer not null default 0,
      error jsonb,
      observations integer not null default 0,
      changes integer not null default 0,
      started_at timestamptz,
      finished_at timestamptz,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create unique index monitor_runs_occurrence_once on monitor_runs (monitor_id, scheduled_for) where trigger = 'scheduled'`.execute(
    db,
  );
  await sql`create index monitor_runs_monitor_idx on monitor_runs (monitor_id, id desc)`.execute(db);
  await sql`create index monitor_runs_open_idx on monitor_runs (created_at) where status in ('queued', 'running')`.execute(db);
  await sql`
    create table monitor_points (
      monitor_id text not null,
      workspace_id text not null,
      target text not null,
      item_id text not null,
      metric text not null,
      at timestamptz not null,
      value double precision not null,
      run_id text not null
    ) partition by range (at)`.execute(db);
  // Covering: a series read (its workspace and monitor, target, metric, item, oldest first) is an
  // index-only scan. The points of one series are spread over as many heap pages as it has
  // points (hourly runs interleave every target), so reading the heap cost a page per point.
  await sql`create index monitor_points_series_idx on monitor_points (workspace_id, monitor_id, target, metric, item_id, at) include (value)`.execute(
    db,
  );
  await sql`
    create table monitor_series (
      monitor_id text not null references monitors (id),
      workspace_id text not null,
      target text not null,
      item_id text not null,
      metric text not null,
      value double precision not null,
      at timestamptz not null,
      primary key (monitor_id, target, item_id, metric)
    )`.execute(db);
  await sql`
    create table monitor_changes (
      id text primary key,
      monitor_id text not null references monitors (id),
      workspace_id text not null,
      run_id text not null,
      target text not null,
      item_id text,
      kind text not null check (kind in ('metric_changed', 'field_changed', 'new_item')),
      field text,
      before jsonb,
      after jsonb,
      change_pct double precision,
      at timestamptz not null
    )`.execute(db);
  await sql`create index monitor_changes_monitor_idx on monitor_changes (monitor_id, id desc)`.execute(db);
  await sql`
    create table monitor_fields (
      monitor_id text not null references monitors (id),
      workspace_id text not null,
      target text not null,
      field text not null,
      value jsonb,
      primary key (monitor_id, target, field)
    )`.execute(db);
  await sql`
    create table monitor_items (
      monitor_id text not null references monitors (id),
      workspace_id text not null,
      target text not null,
      item_id text not null,
      primary key (monitor_id, target, item_id)
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table monitor_items`.execute(db);
  await sql`drop table monitor_fields`.execute(db);
  await sql`drop table monitor_changes`.execute(db);
  await sql`drop table monitor_series`.execute(db);
  await sql`drop table monitor_points`.execute(db);
  await sql`drop table monitor_runs`.execute(db);
  await sql`drop table monitors`.execute(db);
}
