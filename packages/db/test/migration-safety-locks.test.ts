import { randomBytes } from 'node:crypto';
import { type Kysely, type Migration, sql } from 'kysely';
import pg from 'pg';
import { createDb, type Db, MIGRATION_BOUNDS, migrateSetToLatest } from '@sdx/db';
import { baseDatabaseUrl, databaseUrlFor } from '@sdx/testing';

/**
 * Every migration runs in its own transaction with a lock timeout (packages/db/src/migrate.ts):
 * one that waits for a lock behind a long transaction of the running release gives up within
 * the timeout, so the queries queued behind it wait no longer than that, and it is tried again
 * until the lock is free. On an empty database of its own, with migrations made for the test.
 */
describe('migration lock timeout', () => {
  let admin: pg.Client;
  let name: string;
  let db: Db;

  const create: Migration = { up: async (db: Kysely<unknown>) => void (await sql`create table t (id integer primary key)`.execute(db)) };
  const alter: Migration = { up: async (db: Kysely<unknown>) => void (await sql`alter table t add column note text`.execute(db)) };
  const settings: Migration = {
    up: async (db: Kysely<unknown>) =>
      void (await sql`create table seen as select current_setting('lock_timeout') as lock_timeout, current_setting('statement_timeout') as statement_timeout`.execute(
        db,
      )),
  };

  beforeAll(async () => {
    name = `sdx_miglock_${randomBytes(5).toString('hex')}`;
    admin = new pg.Client({ connectionString: baseDatabaseUrl() });
    await admin.connect();
    await admin.query(`create database ${name} template template0`);
    db = createDb({ connectionString: databaseUrlFor(name), max: 4 });
  });

  afterAll(async () => {
    await db.destroy();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  });

  /** A transaction of the running release that reads `t` and stays open: its ACCESS SHARE lock blocks ALTER TABLE. */
  async function longReader(): Promise<{ release(): Promise<void> }> {
    const client = new pg.Client({ connectionString: databaseUrlFor(name) });
    await client.connect();
    await client.query('begin');
    await client.query('select count(*) from t');
    return {
      async release() {
        await client.query('commit');
        await client.end();
      },
    };
  }

  it('runs each migration under the default bounds', async () => {
    expect(await migrateSetToLatest(db, { '0001_create': create, '0002_settings': settings })).toEqual(['0001_create', '0002_settings']);
    const seen = await sql<{ lock_timeout: string; statement_timeout: string }>`select * from seen`.execute(db);
    expect(seen.rows).toEqual([
      {
        lock_timeout: `${MIGRATION_BOUNDS.lockTimeoutMs / 1000}s`,
        statement_timeout: `${MIGRATION_BOUNDS.statementTimeoutMs / 60_000}min`,
      },
    ]);
    // `set local`: the connection is back to the server's default after the migration's transaction.
    expect((await sql<{ v: string }>`select current_setting('lock_timeout') as v`.execute(db)).rows[0].v).toBe('0');
  });

  it('gives up on a lock held by a long transaction, and the queries behind it wait no longer than the timeout', async () => {
    const reader = await longReader();
    try {
      const started = Date.now();
      const retries: string[] = [];
      const migrating = migrateSetToLatest(
        db,
        { '0001_create': create, '0002_settings': settings, '0003_alter': alter },
        { lockTimeoutMs: 300, attempts: 3, pauseMs: 100, maxPauseMs: 100, onRetry: (r) => retries.push(`${r.migration} ${r.code}`) },
      );
      // A request of the running release, arriving while the migration waits for its lock.
      await new Promise((resolve) => setTimeout(resolve, 100));
      const queued = Date.now();
      await sql`select count(*) from t`.execute(db);
      const waitedMs = Date.now() - queued;
      await expect(migrating).rejects.toMatchObject({ code: '55P03' });
      expect(retries).toEqual(['0003_alter 55P03', '0003_alter 55P03']);
      expect(waitedMs).toBeLessThan(1500);
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await reader.release();
    }
    const columns = await sql<{
      column_name: string;
    }>`select column_name from information_schema.columns where table_name = 't' order by 1`.execute(db);
    expect(columns.rows.map((r) => r.column_name)).toEqual(['id']);
  });

  it('tries again until the long transaction ends, then applies the migration', async () => {
    const reader = await longReader();
    const retries: number[] = [];
    const migrating = migrateSetToLatest(
      db,
      { '0001_create': create, '0002_settings': settings, '0003_alter': alter },
      { lockTimeoutMs: 200, attempts: 20, pauseMs: 100, maxPauseMs: 200, onRetry: (r) => retries.push(r.attempt) },
    );
    await new Promise((resolve) => setTimeout(resolve, 700));
    await reader.release();
    expect(await migrating).toEqual(['0003_alter']);
    expect(retries.length).toBeGreaterThan(0);
    const columns = await sql<{
      column_name: string;
    }>`select column_name from information_schema.columns where table_name = 't' order by 1`.execute(db);
    expect(columns.rows.map((r) => r.column_name)).toEqual(['id', 'note']);
  });

  it('does not retry a migration that fails for its own reason', async () => {
    const broken: Migration = { up: async (db: Kysely<unknown>) => void (await sql`alter table missing add column x text`.execute(db)) };
    const retries: string[] = [];
    await expect(
      migrateSetToLatest(
        db,
        { '0001_create': create, '0002_settings': settings, '0003_alter': alter, '0004_broken': broken },
        { onRetry: (r) => retries.push(r.code) },
      ),
    ).rejects.toMatchObject({ code: '42P01' });
    expect(retries).toEqual([]);
  });
});
