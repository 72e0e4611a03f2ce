import { sql } from 'kysely';
import { loadConfig } from '@sdx/config';
import { type Db, migrateDownThrough, migrateToLatest, migrationNames } from '@sdx/db';
import { sealerOf } from '@sdx/sealing';
import { createTestDb } from '@sdx/testing';

/** Migration 0023: webhook secrets stored in clear before it are sealed, and no clear one can be written after it. */
describe('migration 20261127_0023_sealed_webhook_secrets', () => {
  let database: Awaited<ReturnType<typeof createTestDb>>;
  let db: Db;
  // The keys the migration reads from the environment, as the service does.
  const sealer = sealerOf(loadConfig());

  beforeAll(async () => {
    database = await createTestDb();
    db = database.db;
  });

  afterAll(() => database.drop());

  /** 0023 and the migrations after it, applied again by each migration to the latest. */
  const FROM_0023 = migrationNames().filter((n) => n >= '20261127_0023_sealed_webhook_secrets');

  const stored = async (id: string) =>
    db.selectFrom('webhooks').select(['secret', 'previous_secret']).where('id', '=', id).executeTakeFirstOrThrow();

  it('seals the clear secrets of 0022, opens them again on the way down, and refuses clear values once applied', async () => {
    await migrateDownThrough(db, '20261127_0023_sealed_webhook_secrets');
    await sql`insert into workspaces (id, name, monthly_quota, rate_limit_per_minute, max_result_limit, max_active_jobs) values ('ws_seal', 's', 10, 60, 100, 10)`.execute(
      db,
    );
    const current = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    const previous = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
    await sql`
      insert into webhooks (id, workspace_id, url, events, secret, previous_secret, previous_secret_expires_at)
      values ('whk_clear', 'ws_seal', 'https://hooks.example.com/a', '{*}', ${current}, ${previous}, now() + interval '1 hour'),
             ('whk_fresh', 'ws_seal', 'https://hooks.example.com/b', '{*}', ${current}, null, null)`.execute(db);
    // More than one batch of the migration's (500), so its paging is exercised.
    await sql`
      insert into webhooks (id, workspace_id, url, events, secret)
      select 'whk_bulk_' || lpad(n::text, 4, '0'), 'ws_seal', 'https://hooks.example.com/bulk', '{*}', 'whsec_bulk' || n from generate_series(1, 1100) n`.execute(
      db,
    );

    expect(await migrateToLatest(db)).toEqual(FROM_0023);
    const clear = await stored('whk_clear');
    expect(clear.secret.startsWith('sealed:v1:')).toBe(true);
    expect(clear.previous_secret!.startsWith('sealed:v1:')).toBe(true);
    expect(sealer.open(clear.secret)).toBe(current);
    expect(sealer.open(clear.previous_secret!)).toBe(previous);
    expect(await stored('whk_fresh')).toEqual({ secret: expect.stringMatching(/^sealed:v1:/), previous_secret: null });
    const left = await sql<{
      n: number;
    }>`select count(*)::int as n from webhooks where secret like 'whsec_%' or previous_secret like 'whsec_%'`.execute(db);
    expect(left.rows[0].n).toBe(0);
    expect(sealer.open((await stored('whk_bulk_1100')).secret)).toBe('whsec_bulk1100');

    // No clear value can be written any more, in either column.
    await expect(sql`update webhooks set secret = ${current} where id = 'whk_clear'`.execute(db)).rejects.toThrow(/webhooks_secret_sealed/);
    await expect(sql`update webhooks set previous_secret = ${previous} where id = 'whk_clear'`.execute(db)).rejects.toThrow(
      /webhooks_previous_secret_sealed/,
    );

    // Down: the code before 0023 signs with clear secrets, so they are opened again.
    await migrateDownThrough(db, '20261127_0023_sealed_webhook_secrets');
    expect(await stored('whk_clear')).toEqual({ secret: current, previous_secret: previous });
    expect(await stored('whk_fresh')).toEqual({ secret: current, previous_secret: null });
    await sql`update webhooks set previous_secret = ${previous} where id = 'whk_fresh'`.execute(db);

    // Up again: sealing is idempotent, and a value sealed already is kept as it is.
    expect(await migrateToLatest(db)).toEqual(FROM_0023);
    const again = await stored('whk_fresh');
    expect(sealer.open(again.secret)).toBe(current);
    expect(sealer.open(again.previous_secret!)).toBe(previous);
    await sql`delete from webhooks where workspace_id = 'ws_seal'`.execute(db);
  });
});
