import { sql } from 'kysely';
import { type Db, migrateDownThrough, migrateToLatest, migrationNames } from '@sdx/db';
import { createTestDb } from '@sdx/testing';

/** Migration 0022 (the trust layer): what it does to rows that exist, down and up again. */
describe('migration 20261127_0022_trust', () => {
  let database: Awaited<ReturnType<typeof createTestDb>>;
  let db: Db;

  beforeAll(async () => {
    database = await createTestDb();
    db = database.db;
  });
  afterAll(() => database.drop());

  const columnsOf = async (table: string) =>
    (
      await sql<{ column_name: string }>`select column_name from information_schema.columns where table_name = ${table} order by 1`.execute(
        db,
      )
    ).rows.map((r) => r.column_name);
  const tableExists = async (table: string) =>
    (await sql<{ n: number }>`select count(*)::int as n from information_schema.tables where table_name = ${table}`.execute(db)).rows[0]
      .n === 1;

  it("keeps existing users verified, stores emails in one form, backfills team workspaces' makers, and goes down and up again", async () => {
    await migrateDownThrough(db, '20261127_0022_trust');
    expect(await columnsOf('users')).not.toContain('email_verified_at');
    expect(await tableExists('mail_outbox')).toBe(false);

    await sql`insert into users (id, email, display_name, password_hash) values ('usr_a', '  Ａda@Example.COM ', null, 'h')`.execute(db);
    await sql`insert into workspaces (id, name, monthly_quota, rate_limit_per_minute, max_result_limit, max_active_jobs, kind) values ('ws_t', 'Team', 0, 60, 100, 10, 'team')`.execute(
      db,
    );
    await sql`insert into audit_events (id, workspace_id, action, actor_type, actor_id) values ('aud_t', 'ws_t', 'workspace.created', 'user', 'usr_a')`.execute(
      db,
    );
    await sql`insert into invitations (id, workspace_id, email, role, token_hash, invited_by, expires_at) values ('inv_a', 'ws_t', 'BOB@Example.com', 'member', 'th', 'usr_a', now() + interval '1 day')`.execute(
      db,
    );

    const applied = await migrateToLatest(db);
    expect(applied).toEqual(migrationNames().filter((n) => n >= '20261127_0022_trust'));
    const user = await db.selectFrom('users').selectAll().where('id', '=', 'usr_a').executeTakeFirstOrThrow();
    expect(user.email).toBe('ada@example.com');
    expect(user.email_verified_at).toEqual(user.created_at);
    expect(user.two_factor_enabled_at).toBeNull();
    const team = await db.selectFrom('workspaces').selectAll().where('id', '=', 'ws_t').executeTakeFirstOrThrow();
    expect(team).toMatchObject({ created_by: 'usr_a', require_two_factor: false });
    const invitation = await db.selectFrom('invitations').select('email').where('id', '=', 'inv_a').executeTakeFirstOrThrow();
    expect(invitation.email).toBe('bob@example.com');
    for (const table of ['mail_outbox', 'auth_tokens', 'two_factor_recovery_codes']) expect(await tableExists(table)).toBe(true);
  });
});
