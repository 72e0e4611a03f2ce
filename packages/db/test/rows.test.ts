import { sql } from 'kysely';
import { type Db, jsonRows } from '@sdx/db';
import { createTestDb } from '@sdx/testing';

/** jsonRows: many rows as one JSON value, read back with their declared types, never as SQL. */
describe('jsonRows', () => {
  let database: Awaited<ReturnType<typeof createTestDb>>;
  let db: Db;

  beforeAll(async () => {
    database = await createTestDb();
    db = database.db;
  });

  afterAll(() => database.drop());

  it('reads each row with its declared column types, missing keys as null, nested JSON as jsonb', async () => {
    const at = new Date('2026-11-23T10:11:12.345Z');
    const rows = [
      { id: "it's; drop table x --", n: 9007199254740991, at, day: '2026-11-01', doc: [{ a: 'b\\"c' }] },
      { id: 'second', n: 2, at: null, day: null },
    ];
    const { rows: out } = await sql<{ id: string; n: number; at: Date | null; day: string | null; doc: unknown }>`
      select * from ${jsonRows(rows, 'id text, n bigint, at timestamptz, day date, doc jsonb')} as v order by v.n desc
    `.execute(db);
    expect(out).toEqual([
      { id: "it's; drop table x --", n: 9007199254740991, at, day: '2026-11-01', doc: [{ a: 'b\\"c' }] },
      { id: 'second', n: 2, at: null, day: null, doc: null },
    ]);
  });

  it('works inside a transaction, whose statements carry their values as literals', async () => {
    const out = await db.transaction().execute(async (tx) => {
      const { rows } = await sql<{
        total: number;
      }>`select sum(v.n)::int as total from ${jsonRows([{ n: 1 }, { n: 2 }, { n: 3 }], 'n int')} as v`.execute(tx);
      return rows[0].total;
    });
    expect(out).toBe(6);
  });

  it('refuses a column list that is not one', () => {
    expect(() => jsonRows([], 'id text) as x; select 1 --')).toThrow(/not a column list/);
  });
});
