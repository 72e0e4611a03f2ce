import { type Kysely, sql } from 'kysely';

/**
 * users.default_workspace_id: the workspace the console opens after sign-in when the browser
 * has not chosen one (null: the personal workspace). Cleared when that workspace goes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table users add column default_workspace_id text references workspaces (id) on delete set null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table users drop column if exists default_workspace_id`.execute(db);
}
