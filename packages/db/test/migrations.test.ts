import { sql } from 'kysely';
import { type Db, migrateDown, migrateToLatest } from '@sdx/db';
import { createTestDb } from '@sdx/testing';

/** The latest migration, down and up again, on a database migrated to the latest schema. */
describe('migrations', () => {
  let database: Awaited<ReturnType<typeof createTestDb>>;
  let db: Db;

  beforeAll(async () => {
    database = await createTestDb();
    db = database.db;
  });

  afterAll(() => database.drop());

  const reservationIndexes = async () =>
    (await sql<{ indexname: string }>`select indexname from pg_indexes where tablename = 'credit_reservations' order by indexname`.execute(db)).rows.map((r) => r.indexname);

  it('drops the held-reservation index no query reads, and restores it on the way down', async () => {
    expect(await reservationIndexes()).toEqual(['credit_reservations_job_id_key', 'credit_reservations_pkey']);
    await migrateDown(db);
    expect(await reservationIndexes()).toEqual(['credit_reservations_held_idx', 'credit_reservations_job_id_key', 'credit_reservations_pkey']);
    expect(await migrateToLatest(db)).toEqual(['20261123_0006_drop_held_reservation_index']);
    expect(await reservationIndexes()).toEqual(['credit_reservations_job_id_key', 'credit_reservations_pkey']);
  });
});
