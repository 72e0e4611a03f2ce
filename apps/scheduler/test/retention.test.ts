import { type KyselyPlugin, sql } from 'kysely';
import pino from 'pino';
import type { Db } from '@sdx/db';
import { createWorkspace, IDEMPOTENCY_PURGE_BATCH, purgeExpiredIdempotencyKeys, systemClock } from '@sdx/domain';
import { createTestDb, eventually } from '@sdx/testing';
import { startIdempotencyPurge } from '../src/purge';

/**
 * The purge of expired idempotency records, on a real Postgres: batched statements, rows held by
 * another transaction skipped rather than waited for, and the scheduler's periodic loop.
 */
let database: Awaited<ReturnType<typeof createTestDb>>;
let db: Db;
let workspaceId: string;
const log = pino({ level: 'silent' });

beforeAll(async () => {
  database = await createTestDb();
  db = database.db;
  workspaceId = (await db.transaction().execute((tx) => createWorkspace(tx, systemClock, { name: 'purge' }))).id;
});

afterAll(() => database.drop());

beforeEach(async () => {
  await db.deleteFrom('idempotency_keys').execute();
});

async function insertKeys(prefix: string, count: number, expiresAt: Date): Promise<void> {
  await sql`
    insert into idempotency_keys (workspace_id, endpoint, key, request_hash, resource_type, resource_id, created_at, expires_at)
    select ${workspaceId}, 'POST /v1/jobs', ${prefix}::text || g, 'hash', 'job', 'job_' || g, ${new Date(expiresAt.getTime() - 86_400_000)}, ${expiresAt}
    from generate_series(1, ${count}::int) g
  `.execute(db);
}

async function keys(): Promise<string[]> {
  return (await db.selectFrom('idempotency_keys').select('key').orderBy('key').execute()).map((r) => r.key);
}

/** The pool with a count of the statements sent through it. */
function counted(): { db: Db; statements: () => number } {
  let statements = 0;
  const plugin: KyselyPlugin = {
    transformQuery: (args) => {
      statements += 1;
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  return { db: db.withPlugin(plugin), statements: () => statements };
}

describe('purgeExpiredIdempotencyKeys', () => {
  it('deletes every expired record, at most one batch per statement, and keeps the live ones', async () => {
    const now = new Date();
    await insertKeys('old-', 2500, new Date(now.getTime() - 60_000));
    await insertKeys('edge-', 1, now);
    await insertKeys('live-', 3, new Date(now.getTime() + 60_000));
    const probe = counted();
    expect(await purgeExpiredIdempotencyKeys(probe.db, now, 1000)).toBe(2501);
    expect(probe.statements()).toBe(3); // 1000 + 1000 + 501
    expect(await keys()).toEqual(['live-1', 'live-2', 'live-3']);
    expect(await purgeExpiredIdempotencyKeys(db, now, 1000)).toBe(0);
  });

  it('uses IDEMPOTENCY_PURGE_BATCH by default', async () => {
    const now = new Date();
    await insertKeys('old-', IDEMPOTENCY_PURGE_BATCH + 1, new Date(now.getTime() - 1));
    const probe = counted();
    expect(await purgeExpiredIdempotencyKeys(probe.db, now)).toBe(IDEMPOTENCY_PURGE_BATCH + 1);
    expect(probe.statements()).toBe(2);
    expect(await keys()).toEqual([]);
  });

  it('skips a record another transaction holds instead of waiting for it', async () => {
    const now = new Date();
    await insertKeys('old-', 50, new Date(now.getTime() - 60_000));
    let releaseLock!: () => void;
    const lockReleased = new Promise<void>((resolve) => (releaseLock = resolve));
    let lockTaken!: () => void;
    const locked = new Promise<void>((resolve) => (lockTaken = resolve));
    const holder = db.transaction().execute(async (tx) => {
      await sql`select 1 from idempotency_keys where key = 'old-7' for update`.execute(tx);
      lockTaken();
      await lockReleased;
    });
    await locked;
    try {
      const started = Date.now();
      expect(await purgeExpiredIdempotencyKeys(db, now, 20)).toBe(49);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(await keys()).toEqual(['old-7']);
    } finally {
      releaseLock();
      await holder;
    }
    expect(await purgeExpiredIdempotencyKeys(db, now, 20)).toBe(1);
    expect(await keys()).toEqual([]);
  });
});

describe('startIdempotencyPurge', () => {
  it('purges at start and then every interval, and stops', async () => {
    await insertKeys('before-', 5, new Date(Date.now() - 60_000));
    await insertKeys('live-', 2, new Date(Date.now() + 3_600_000));
    const purge = startIdempotencyPurge({ db, clock: systemClock, log }, { intervalMs: 100, batchSize: 2 });
    try {
      await eventually(async () => (await keys()).every((k) => k.startsWith('live-')), 10_000, 20);
      await insertKeys('later-', 5, new Date(Date.now() - 1));
      await eventually(async () => (await keys()).every((k) => k.startsWith('live-')), 10_000, 20);
    } finally {
      await purge.stop();
    }
    await insertKeys('after-stop-', 3, new Date(Date.now() - 1));
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await keys()).toEqual(['after-stop-1', 'after-stop-2', 'after-stop-3', 'live-1', 'live-2']);
  });

  it('logs a failed pass and runs the next one on time', async () => {
    const errors: unknown[] = [];
    const failing = { ...log, error: (obj: unknown) => errors.push(obj), info: () => undefined } as unknown as typeof log;
    let calls = 0;
    const clock = {
      now(): Date {
        calls += 1;
        if (calls === 1) throw new Error('clock unavailable');
        return new Date();
      },
    };
    await insertKeys('old-', 3, new Date(Date.now() - 60_000));
    const purge = startIdempotencyPurge({ db, clock, log: failing }, { intervalMs: 100 });
    try {
      await eventually(async () => (await keys()).length === 0, 10_000, 20);
    } finally {
      await purge.stop();
    }
    expect(errors).toHaveLength(1);
    expect(calls).toBeGreaterThanOrEqual(2);
  });
});
