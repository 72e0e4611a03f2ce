import { sql } from 'kysely';
import { type Db, migrateDownThrough, migrateToLatest, migrationNames } from '@sdx/db';
import { createTestDb } from '@sdx/testing';

/** Migration 0027 (destinations): the table, the delivery columns of jobs and batches, their rules and indexes, down and up again. */
describe('migration 20261130_0027_destinations', () => {
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
  const indexes = async () =>
    (
      await sql<{
        indexname: string;
      }>`select indexname from pg_indexes where indexname in ('jobs_delivery_due_idx', 'batches_delivery_due_idx') order by 1`.execute(db)
    ).rows.map((r) => r.indexname);

  it('adds destinations and the deliveries of jobs and batches, leaves existing work without one, and goes down and up again', async () => {
    await sql`insert into workspaces (id, name, monthly_quota, rate_limit_per_minute, max_result_limit, max_active_jobs) values ('ws_d', 'd', 10, 60, 100, 10)`.execute(
      db,
    );
    await migrateDownThrough(db, '20261130_0027_destinations');
    expect(await tableExists('destinations')).toBe(false);
    expect(await columnsOf('jobs')).not.toContain('delivery_status');
    expect(await columnsOf('schedules')).not.toContain('destination_id');
    expect(await indexes()).toEqual([]);
    await sql`insert into batches (id, workspace_id, platform, operation, requested_limit, target_count) values ('bat_old', 'ws_d', 'instagram', 'profile', 1, 2)`.execute(
      db,
    );

    expect(await migrateToLatest(db)).toEqual(migrationNames().filter((n) => n >= '20261130_0027_destinations'));
    expect(await tableExists('destinations')).toBe(true);
    for (const table of ['jobs', 'batches']) {
      expect(await columnsOf(table)).toEqual(
        expect.arrayContaining([
          'destination_id',
          'delivery_status',
          'delivery_key',
          'delivery_attempts',
          'delivery_error',
          'delivered_at',
          'delivery_next_attempt_at',
          'delivery_lease_until',
        ]),
      );
    }
    expect(await columnsOf('schedules')).toContain('destination_id');
    expect(await indexes()).toEqual(['batches_delivery_due_idx', 'jobs_delivery_due_idx']);
    const old = await db.selectFrom('batches').selectAll().where('id', '=', 'bat_old').executeTakeFirstOrThrow();
    expect(old).toMatchObject({ destination_id: null, delivery_status: null, delivery_attempts: 0 });

    // A secret access key is only ever stored sealed; a delivery has a status exactly when it has a destination.
    const insert = (secret: string) =>
      sql`insert into destinations (id, workspace_id, name, type, bucket, region, access_key_id, secret_access_key, format)
          values (${`dst_${secret.length}`}, 'ws_d', 'n', 's3', 'b', 'us-east-1', 'AKIA', ${secret}, 'ndjson')`.execute(db);
    await expect(insert('plain-secret')).rejects.toThrow(/check/);
    await insert('sealed:v1:abcd1234:payload');
    await expect(sql`update batches set destination_id = 'dst_x' where id = 'bat_old'`.execute(db)).rejects.toThrow(
      /batches_delivery_destination/,
    );
    await sql`update batches set destination_id = 'dst_x', delivery_status = 'pending', delivery_key = 'k' where id = 'bat_old'`.execute(
      db,
    );
    await expect(sql`update batches set delivery_status = 'lost' where id = 'bat_old'`.execute(db)).rejects.toThrow(/check/);
  });
});
