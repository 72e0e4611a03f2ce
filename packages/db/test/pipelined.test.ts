import { sql } from 'kysely';
import pg from 'pg';
import { type Db, prepared, thenCommit, together } from '@sdx/db';
import { inlineParameters, literal } from '@sdx/db/src/pipelined';
import { createTestDb } from '@sdx/testing';

/**
 * The pipelined client: BEGIN travels with a transaction's first statement and COMMIT with a
 * statement marked thenCommit. What a transaction reads and writes must not change, and no
 * value may ever be read as SQL.
 */

describe('inlineParameters', () => {
  it('writes each value as pg would send it, quoted', () => {
    const at = new Date('2026-11-22T10:00:00.000Z');
    const text = inlineParameters('select $1, $2, $3, $4, $5, $10', [1, 'it\'s', null, ['a', 'b"c'], { k: 'v' }, 0, 0, 0, 0, true]);
    expect(text).toBe(`select '1', 'it''s', NULL,  E'{"a","b\\\\"c"}', '{"k":"v"}', 'true'`);
    expect(inlineParameters('select $1::timestamptz', [at])).toMatch(/^select '2026-11-2\d[T ][\d:.]+[+-]\d\d:\d\d'::timestamptz$/);
    expect(literal('back\\slash')).toBe(" E'back\\\\slash'");
  });

  it('leaves strings, identifiers, comments and dollar quotes alone', () => {
    const text = `select '$1', "a$1", E'\\'$1', $$ $1 $$, $tag$ $1 $tag$ -- $1\n, /* $1 /* $1 */ */ $1, x$1`;
    expect(inlineParameters(text, ['v'])).toBe(`select '$1', "a$1", E'\\'$1', $$ $1 $$, $tag$ $1 $tag$ -- $1\n, /* $1 /* $1 */ */ 'v', x$1`);
  });

  it('refuses a placeholder without a value', () => {
    expect(() => inlineParameters('select $2', ['only one'])).toThrow(/\$2/);
  });

  it('reuses a text\'s split, each time with that call\'s values', () => {
    const text = `insert into t (a, b) values ($1, $2), ($2, '$1')`;
    expect(inlineParameters(text, ['x', 1])).toBe(`insert into t (a, b) values ('x', '1'), ('1', '$1')`);
    expect(inlineParameters(text, ["o'k", null])).toBe(`insert into t (a, b) values ('o''k', NULL), (NULL, '$1')`);
    expect(() => inlineParameters(text, ['x'])).toThrow(/\$2/);
  });
});

describe('pipelined transactions', () => {
  let database: Awaited<ReturnType<typeof createTestDb>>;
  let db: Db;
  let statements: string[];
  let spy: jest.SpyInstance;

  beforeAll(async () => {
    database = await createTestDb();
    db = database.db;
    await sql`create table pipelined (id text primary key, n int not null, at timestamptz, tags text[], doc jsonb)`.execute(db);
  });

  beforeEach(() => {
    statements = [];
    const original = pg.Client.prototype.query;
    spy = jest.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
      const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: unknown } | undefined)?.text;
      if (typeof text === 'string') statements.push(text);
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    } as never);
  });

  afterEach(() => spy.mockRestore());

  afterAll(() => database.drop());

  it('sends BEGIN with the first statement and COMMIT with the marked one: two round trips', async () => {
    const at = new Date('2026-11-22T10:00:00.123Z');
    const rows = await db.transaction().execute(async (tx) => {
      await tx.insertInto('pipelined' as never).values({ id: "o'brien $1", n: 1, at, tags: ['x', 'y,z'], doc: JSON.stringify({ q: "'; drop table pipelined; --" }) } as never).execute();
      return tx
        .updateTable('pipelined' as never)
        .set({ n: sql`n + ${41}` } as never)
        .where('id' as never, '=', "o'brien $1" as never)
        .returningAll()
        .modifyEnd(thenCommit)
        .execute();
    });
    expect(statements).toHaveLength(2);
    expect(statements[0]).toMatch(/^begin;\ninsert into/);
    expect(statements[1]).toMatch(/;\ncommit$/);
    expect(rows).toEqual([{ id: "o'brien $1", n: 42, at, tags: ['x', 'y,z'], doc: { q: "'; drop table pipelined; --" } }]);
    const stored = await sql<{ n: number }>`select n from pipelined where id = ${"o'brien $1"}`.execute(db);
    expect(stored.rows).toEqual([{ n: 42 }]);
  });

  it('rolls back everything when a statement fails, whether it went with BEGIN or not', async () => {
    await expect(
      db.transaction().execute(async (tx) => {
        await sql`insert into pipelined (id, n) values (${'first'}, ${1})`.execute(tx);
        await sql`insert into pipelined (id, n) values (${'first'}, ${2})`.execute(tx);
      }),
    ).rejects.toMatchObject({ code: '23505' });
    await expect(
      db.transaction().execute(async (tx) => {
        await sql`insert into pipelined (id, n) values (${'second'}, ${'not a number'})`.execute(tx);
      }),
    ).rejects.toMatchObject({ code: '22P02' });
    const left = await sql<{ id: string }>`select id from pipelined where id in ('first', 'second')`.execute(db);
    expect(left.rows).toEqual([]);
    // The connections went back to the pool in a clean state.
    const after = await db.transaction().execute((tx) => sql<{ one: number }>`select 1 as one`.execute(tx));
    expect(after.rows).toEqual([{ one: 1 }]);
  });

  it('rolls back when the marked statement fails, and sends nothing for an empty transaction', async () => {
    await expect(
      db.transaction().execute(async (tx) => {
        await sql`insert into pipelined (id, n) values (${'third'}, ${3})`.execute(tx);
        await sql`insert into pipelined (id, n) values (${'third'}, ${3}) ${thenCommit}`.execute(tx);
      }),
    ).rejects.toMatchObject({ code: '23505' });
    expect((await sql`select 1 from pipelined where id = 'third'`.execute(db)).rows).toEqual([]);
    statements = [];
    await db.transaction().execute(async () => undefined);
    expect(statements).toEqual([]);
  });

  it('refuses a statement after the one that committed', async () => {
    await expect(
      db.transaction().execute(async (tx) => {
        await sql`insert into pipelined (id, n) values (${'fourth'}, ${4}) ${thenCommit}`.execute(tx);
        await sql`insert into pipelined (id, n) values (${'fifth'}, ${5})`.execute(tx);
      }),
    ).rejects.toThrow(/after the final statement/);
    const rows = await sql<{ id: string }>`select id from pipelined where id in ('fourth', 'fifth')`.execute(db);
    expect(rows.rows).toEqual([{ id: 'fourth' }]);
  });

  it('keeps what the final statement committed when the caller fails after it, and reports the caller\'s error', async () => {
    await expect(
      db.transaction().execute(async (tx) => {
        await sql`insert into pipelined (id, n) values (${'sixth'}, ${6}) ${thenCommit}`.execute(tx);
        throw new Error('caller failed after the commit');
      }),
    ).rejects.toThrow('caller failed after the commit');
    expect((await sql<{ id: string }>`select id from pipelined where id = 'sixth'`.execute(db)).rows).toEqual([{ id: 'sixth' }]);
  });

  it('sends two statements together in one message, the second reading after the first has its lock', async () => {
    await sql`insert into pipelined (id, n) values ('shared', 0)`.execute(db);
    let held!: () => void;
    const locked = new Promise<void>((resolve) => (held = resolve));
    const first = db.transaction().execute(async (tx) => {
      await sql`select n from pipelined where id = 'shared' for update`.execute(tx);
      held();
      await sql`select pg_sleep(0.1)`.execute(tx);
      await sql`update pipelined set n = 7 where id = 'shared' ${thenCommit}`.execute(tx);
    });
    await locked;
    statements = [];
    const [lockedRows, read] = await db.transaction().execute((tx) =>
      together(
        tx,
        sql<{ id: string }>`select id from pipelined where id = ${'shared'} for update`.compile(tx),
        sql<{ n: number }>`select n from pipelined where id = ${'shared'}`.compile(tx),
      ),
    );
    await first;
    expect(lockedRows).toEqual([{ id: 'shared' }]);
    // The read's snapshot was taken after the lock wait: it sees the first transaction's 7.
    expect(read).toEqual([{ n: 7 }]);
    // One message: BEGIN, the lock and the read (the other transaction's statements aside).
    const ours = statements.filter((t) => t.includes("where id = 'shared'") && !t.includes('update pipelined'));
    expect(ours).toHaveLength(1);
    expect(ours[0]).toMatch(/^begin;\nselect id from pipelined where id = 'shared' for update;\nselect n from pipelined where id = 'shared'/);
  });

  it('sends three statements together, each with its own rows', async () => {
    await sql`insert into pipelined (id, n) values ('three', 3)`.execute(db);
    statements = [];
    const [a, b, c] = await db.transaction().execute((tx) =>
      together(
        tx,
        sql<{ id: string }>`select id from pipelined where id = ${'three'} for update`.compile(tx),
        sql<{ n: number }>`select n from pipelined where id = ${'three'}`.compile(tx),
        sql<{ none: number }>`select 1 as none where false`.compile(tx),
      ),
    );
    expect([a, b, c]).toEqual([[{ id: 'three' }], [{ n: 3 }], []]);
    expect(statements.filter((t) => t.includes("'three'"))).toHaveLength(1);
  });

  it('sends a statement marked prepared as a named statement, parsed once per connection', async () => {
    await sql`insert into pipelined (id, n) values ('p1', 1), ('p2', 2)`.execute(db);
    const byId = (conn: Db, id: string) => sql<{ n: number }>`select n from pipelined where id = ${id} ${prepared('pipelined_by_id')}`.execute(conn);
    const seen = await db.connection().execute(async (conn) => {
      const found = [(await byId(conn, 'p1')).rows, (await byId(conn, 'p2')).rows, (await byId(conn, 'none')).rows];
      const named = await sql<{ name: string }>`select name from pg_prepared_statements`.execute(conn);
      return { found, named: named.rows.map((r) => r.name) };
    });
    expect(seen.found).toEqual([[{ n: 1 }], [{ n: 2 }], []]);
    expect(seen.named).toEqual(['pipelined_by_id']);
    // In a transaction whose BEGIN is held back, it travels with BEGIN like any other statement.
    const inTx = await db.transaction().execute(async (tx) => (await byId(tx as unknown as Db, 'p2')).rows);
    expect(inTx).toEqual([{ n: 2 }]);
    expect(statements.at(-2)).toMatch(/^begin;\nselect n from pipelined where id = 'p2'/);
    expect(() => prepared('Robert; drop')).toThrow(/not a statement name/);
  });

  it('sees, in its first statement, what a transaction it waited for committed', async () => {
    await sql`insert into pipelined (id, n) values ('counter', 0)`.execute(db);
    // Two transactions increment the same row; the second one's first statement (sent with its
    // BEGIN) waits for the first's lock and then reads its committed value.
    await Promise.all(
      [1, 2].map(() =>
        db.transaction().execute(async (tx) => {
          await sql`select n from pipelined where id = 'counter' for update`.execute(tx);
          await sql`select pg_sleep(0.05)`.execute(tx);
          await sql`update pipelined set n = n + 1 where id = 'counter' ${thenCommit}`.execute(tx);
        }),
      ),
    );
    expect((await sql<{ n: number }>`select n from pipelined where id = 'counter'`.execute(db)).rows).toEqual([{ n: 2 }]);
  });
});
