import { type Kysely, sql } from 'kysely';

/**
 * API keys gain an expiry and who made them; their shown prefix is the secret's first 12
 * characters. Audit events: append-only (a trigger refuses updates and deletes), read newest
 * first per workspace.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table api_keys add column expires_at timestamptz, add column created_by text`.execute(db);
  await sql`update api_keys set prefix = left(prefix, 12) where length(prefix) > 12`.execute(db);

  await db.schema
    .createTable('audit_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('actor_type', 'text', (c) => c.notNull().check(sql`actor_type in ('user', 'api_key', 'system')`))
    .addColumn('actor_id', 'text')
    .addColumn('target_type', 'text')
    .addColumn('target_id', 'text')
    .addColumn('data', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('ip', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('audit_events_workspace_idx').on('audit_events').columns(['workspace_id', 'id desc']).execute();
  await sql`
    create function audit_events_append_only() returns trigger language plpgsql as $$
    begin
      raise exception 'audit_events is append-only';
    end
    $$
  `.execute(db);
  await sql`
    create trigger audit_events_append_only before update or delete on audit_events
    for each row execute function audit_events_append_only()
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('audit_events').execute();
  await sql`drop function audit_events_append_only()`.execute(db);
  await sql`alter table api_keys drop column expires_at, drop column created_by`.execute(db);
}
