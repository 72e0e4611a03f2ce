import { sql } from 'kysely';
import pg from 'pg';
import { createDb, type Db, sendTogether } from '@sdx/db';
import { createTestDb } from '@sdx/testing';

/**
 * The pipelined driver (pg's pipeline mode behind kysely): BEGIN is not waited for, statements
 * sent together go back to back and are waited for once. What a transaction reads and writes
 * must not change, parameters stay parameters, and a connection lost while checked out must not
 * take the process down.
 */

describe('pipelined driver', () => {
  let database: Awaited<ReturnType<typeof createTestDb>>;
  let db: Db;
  /** What went to pg, in order: `sent <text>` when a statement was written, `answered <text>` when its answer came. */
  let events: string[];
  let spy: jest.SpyInstance;

  beforeAll(async () => {
    database = await createTestDb();
    db = database.db;
    await sql`create table pipelined (id text primary key, n int not null, at timestamptz, tags text[], doc jsonb)`.execute(db);
  });

  beforeEach(() => {
    events = [];
    // The method itself, applied below to the client it is called on.
    const original = Reflect.get(pg.Client.prototype, 'query') as (...a: unknown[]) => unknown;
    spy = jest.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
      const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: unknown } | undefined)?.text;
      const result = original.apply(this, args);
      if (typeof text === 'string') {
        events.push(`sent ${text}`);
        if (result instanceof Promise)
          result.then(
            () => events.push(`answered ${text}`),
            () => events.push(`answered ${text}`),
          );
      }
      return result;
    });
  });

  afterEach(() => spy.mockRestore());

  afterAll(() => database.drop());

  const sentBeforeAnswered = (texts: RegExp[]) => {
    const firstAnswer = events.findIndex((e) => e.startsWith('answered ') && texts.some((t) => t.test(e.slice(9))));
    return texts.every((t) => {
      const sent = events.findIndex((e) => e.startsWith('sent ') && t.test(e.slice(5)));
      return sent >= 0 && sent < firstAnswer;
    });
  };

  it('sends BEGIN and the first statement without waiting between them, with bound parameters', async () => {
    const at = new Date('2026-11-22T10:00:00.123Z');
    const hostile = "o'brien $1'); drop table pipelined; --";
    const rows = await db.transaction().execute(async (tx) => {
      await tx
        .insertInto('pipelined' as never)
        .values({ id: hostile, n: 1, at, tags: ['x', 'y,z'], doc: JSON.stringify({ q: hostile }) })
        .execute();
      return tx
        .updateTable('pipelined' as never)
        .set({ n: sql`n + ${41}` } as never)
        .where('id' as never, '=', hostile as never)
        .returningAll()
        .execute();
    });
    expect(sentBeforeAnswered([/^begin$/, /^insert into "pipelined"/])).toBe(true);
    // The values travel as parameters: the statement text has placeholders and none of the values.
    const insert = events.find((e) => e.startsWith('sent insert into'))!;
    expect(insert).toContain('$1');
    expect(insert).not.toContain('brien');
    expect(rows).toEqual([{ id: hostile, n: 42, at, tags: ['x', 'y,z'], doc: { q: hostile } }]);
    const stored = await sql<{ n: number }>`select n from pipelined where id = ${hostile}`.execute(db);
    expect(stored.rows).toEqual([{ n: 42 }]);
  });

  it('rolls back everything when a statement fails, and hands back a clean connection', async () => {
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
    const after = await db.transaction().execute((tx) => sql<{ one: number }>`select 1 as one`.execute(tx));
    expect(after.rows).toEqual([{ one: 1 }]);
  });

  it('commits a transaction that ran no statement, and one whose caller fails rolls back', async () => {
    await db.transaction().execute(() => Promise.resolve());
    await expect(
      db.transaction().execute(async (tx) => {
        await sql`insert into pipelined (id, n) values (${'third'}, ${3})`.execute(tx);
        throw new Error('caller failed');
      }),
    ).rejects.toThrow('caller failed');
    expect((await sql`select 1 from pipelined where id = 'third'`.execute(db)).rows).toEqual([]);
  });

  it('sends statements together back to back, the second reading after the first has its lock', async () => {
    await sql`insert into pipelined (id, n) values ('shared', 0)`.execute(db);
    let held!: () => void;
    const locked = new Promise<void>((resolve) => (held = resolve));
    const first = db.transaction().execute(async (tx) => {
      await sql`select n from pipelined where id = 'shared' for update`.execute(tx);
      held();
      await sql`select pg_sleep(0.1)`.execute(tx);
      await sql`update pipelined set n = 7 where id = 'shared'`.execute(tx);
    });
    await locked;
    events = [];
    const [lockedRows, read] = await db
      .transaction()
      .execute((tx) =>
        sendTogether(
          tx,
          sql<{ id: string }>`select id from pipelined where id = ${'shared'} for update`.compile(tx),
          sql<{ n: number }>`select n from pipelined where id = ${'shared'} /* read */`.compile(tx),
        ),
      );
    await first;
    expect(lockedRows).toEqual([{ id: 'shared' }]);
    // The read's snapshot was taken after the lock wait: it sees the first transaction's 7.
    expect(read).toEqual([{ n: 7 }]);
    // BEGIN, the lock and the read were all written before the first of them was answered.
    expect(sentBeforeAnswered([/^begin$/, /for update$/, /\/\* read \*\/$/])).toBe(true);
  });

  it('answers each statement sent together with its own rows, inside a transaction or not', async () => {
    await sql`insert into pipelined (id, n) values ('three', 3)`.execute(db);
    const statements = (tx: Db) =>
      [
        sql<{ id: string }>`select id from pipelined where id = ${'three'}`.compile(tx),
        sql<{ n: number }>`select n from pipelined where id = ${'three'}`.compile(tx),
        sql<{ none: number }>`select 1 as none where false`.compile(tx),
      ] as const;
    const inside = await db.transaction().execute((tx) => sendTogether(tx, ...statements(tx)));
    const outside = await sendTogether(db, ...statements(db));
    expect(inside).toEqual([[{ id: 'three' }], [{ n: 3 }], []]);
    expect(outside).toEqual(inside);
  });

  it('reports the first error of statements sent together and rolls the transaction back', async () => {
    await expect(
      db
        .transaction()
        .execute((tx) =>
          sendTogether(
            tx,
            sql`insert into pipelined (id, n) values ('fourth', 4)`.compile(tx),
            sql`insert into pipelined (id, n) values ('fourth', 5)`.compile(tx),
            sql`select 1`.compile(tx),
          ),
        ),
    ).rejects.toMatchObject({ code: '23505' });
    expect((await sql`select 1 from pipelined where id = 'fourth'`.execute(db)).rows).toEqual([]);
  });

  it('sees, in its first statement, what a transaction it waited for committed', async () => {
    await sql`insert into pipelined (id, n) values ('counter', 0)`.execute(db);
    await Promise.all(
      [1, 2].map(() =>
        db.transaction().execute(async (tx) => {
          await sql`select n from pipelined where id = 'counter' for update`.execute(tx);
          await sql`select pg_sleep(0.05)`.execute(tx);
          await sql`update pipelined set n = n + 1 where id = 'counter'`.execute(tx);
        }),
      ),
    );
    expect((await sql<{ n: number }>`select n from pipelined where id = 'counter'`.execute(db)).rows).toEqual([{ n: 2 }]);
  });

  it('refuses a streamed read with a clear error', async () => {
    await expect(async () => {
      for await (const row of db
        .selectFrom('pipelined' as never)
        .selectAll()
        .stream())
        void row;
    }).rejects.toThrow(/keyset slices/);
  });

  it('survives a connection killed while it is checked out: the statement fails, the process and the pool go on', async () => {
    const own = createDb({ connectionString: database.url, max: 2 });
    try {
      const failed = own.transaction().execute(async (tx) => {
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(tx);
        await sql`select pg_terminate_backend(${rows[0].pid})`.execute(db);
        await sql`select pg_sleep(0.2)`.execute(tx);
      });
      await expect(failed).rejects.toThrow();
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(own);
      expect(rows).toEqual([{ one: 1 }]);
    } finally {
      await own.destroy();
    }
  });
});
