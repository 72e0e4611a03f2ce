import { type Kysely, sql } from 'kysely';

/**
 * Deleting a workspace's data (the admin CLI's delete-workspace):
 * - workspace_deletions: the record that a workspace was deleted, by whom, and how many rows of
 *   each table went. Not keyed by a foreign key to the workspace, so it survives the deletion it
 *   records; append-only, as audit_events is. It holds the workspace's ID and counts only.
 * - audit_events stays append-only, except for the one transaction that deletes a workspace's
 *   events: a delete passes when the transaction set `sdx.deleting_workspace` to that workspace
 *   (set_config(…, true), so it lasts that transaction only). Updates are refused as before.
 *
 * Additive: the previous release reads neither. Replacing the trigger's function (the trigger itself is
 * kept) takes a brief lock on audit_events, bounded by the migrations' lock timeout.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table workspace_deletions (
      id text primary key,
      workspace_id text not null,
      action text not null default 'workspace.deleted',
      actor_type text not null,
      actor_id text,
      data jsonb not null default '{}'::jsonb,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index workspace_deletions_workspace_idx on workspace_deletions (workspace_id)`.execute(db);
  await sql`
    create function workspace_deletions_append_only() returns trigger language plpgsql as $$
    begin
      raise exception 'workspace_deletions is append-only';
    end
    $$`.execute(db);
  await sql`
    create trigger workspace_deletions_append_only before update or delete on workspace_deletions
    for each row execute function workspace_deletions_append_only()`.execute(db);
  await sql`
    create or replace function audit_events_append_only() returns trigger language plpgsql as $$
    begin
      if tg_op = 'DELETE' and old.workspace_id = current_setting('sdx.deleting_workspace', true) then
        return old;
      end if;
      raise exception 'audit_events is append-only';
    end
    $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function audit_events_append_only() returns trigger language plpgsql as $$
    begin
      raise exception 'audit_events is append-only';
    end
    $$`.execute(db);
  await sql`drop table workspace_deletions`.execute(db);
  await sql`drop function workspace_deletions_append_only()`.execute(db);
}
