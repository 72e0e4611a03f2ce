import { randomBytes } from 'node:crypto';
import { type KyselyPlugin, sql } from 'kysely';
import pino from 'pino';
import { loadConfig } from '@sdx/config';
import type { Db } from '@sdx/db';
import {
  createWorkspace,
  purgeEndedSessions,
  purgeExpiredAuthTokens,
  purgeExpiredIdempotencyKeys,
  purgeExpiredOAuth,
  purgeExpiredResults,
  purgeOldMail,
  RETENTION_BATCH,
  runRetention,
  SESSION_IDLE_MS,
  type Clock,
  systemClock,
} from '@sdx/domain/testing';
import { BackgroundRunner, createRuntime, taskNamed } from '@sdx/runtime';
import { createTestDb, eventually, testRedisUrl } from '@sdx/testing';

/**
 * The retention purge (extensions.md 9) on a real Postgres, with the time it runs at injected:
 * results expired RESULT_RETENTION_DAYS after their job finished (the job kept, pages read by a
 * cached job kept until that one expires too), idempotency records and ended sessions deleted;
 * batched statements, rows held by another transaction skipped rather than waited for, and the
 * scheduler's `retention` task of the background catalog on its runner.
 */
let database: Awaited<ReturnType<typeof createTestDb>>;
let db: Db;
let workspaceId: string;
const log = pino({ level: 'silent' });
const DAY = 86_400_000;

beforeAll(async () => {
  database = await createTestDb();
  db = database.db;
  workspaceId = (await db.transaction().execute((tx) => createWorkspace(tx, systemClock, { name: 'purge' }))).id;
});

afterAll(() => database.drop());

beforeEach(async () => {
  await db.deleteFrom('idempotency_keys').execute();
  await db.deleteFrom('job_result_pages').execute();
  await db.deleteFrom('jobs').execute();
  await db.deleteFrom('sessions').execute();
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
    transformResult: (args) => Promise.resolve(args.result),
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

  it('uses RETENTION_BATCH by default', async () => {
    const now = new Date();
    await insertKeys('old-', RETENTION_BATCH + 1, new Date(now.getTime() - 1));
    const probe = counted();
    expect(await purgeExpiredIdempotencyKeys(probe.db, now)).toBe(RETENTION_BATCH + 1);
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

interface JobSpec {
  id: string;
  status?: 'completed' | 'failed' | 'running';
  finishedAt: Date | null;
  /** A cached job: it reads this job's pages. */
  source?: string;
  pages?: number;
}

/** Jobs as the worker leaves them: completed ones with their result pages (two items a page). */
async function insertJobs(specs: JobSpec[]): Promise<void> {
  for (const spec of specs) {
    await sql`
      insert into jobs (id, workspace_id, platform, operation, target, normalized_target, request_key, requested_limit, status,
                        max_attempts, credit_rate, results_per_credit, base_credits, cached, source_job_id, finished_at, result_count)
      values (${spec.id}, ${workspaceId}, 'twitter', 'followers', 'nasa', 'nasa', ${spec.id}, 10, ${spec.status ?? 'completed'},
              4, 1, 1, 0, ${spec.source !== undefined}, ${spec.source ?? null}, ${spec.finishedAt}, ${(spec.pages ?? 0) * 2})
    `.execute(db);
    if (spec.pages) {
      await sql`
        insert into job_result_pages (job_id, page_no, item_count, items)
        select ${spec.id}, g, 2, jsonb_build_array(jsonb_build_object('id', g * 2), jsonb_build_object('id', g * 2 + 1))
        from generate_series(0, ${spec.pages - 1}::int) g
      `.execute(db);
    }
  }
}

async function jobStates(): Promise<Record<string, { expired: boolean; pages: number }>> {
  const { rows } = await sql<{ id: string; result_expired: boolean; pages: number }>`
    select j.id, j.result_expired, (select count(*)::int from job_result_pages p where p.job_id = j.id) as pages from jobs j order by j.id
  `.execute(db);
  return Object.fromEntries(rows.map((r) => [r.id, { expired: r.result_expired, pages: r.pages }]));
}

describe('purgeExpiredResults', () => {
  it('expires results finished before the retention period, keeping the jobs and everything newer', async () => {
    const now = new Date('2027-03-01T12:00:00Z');
    const ago = (days: number) => new Date(now.getTime() - days * DAY);
    await insertJobs([
      { id: 'job_a_old', finishedAt: ago(45), pages: 3 },
      { id: 'job_b_edge', finishedAt: ago(30), pages: 2 },
      { id: 'job_c_recent', finishedAt: ago(29), pages: 2 },
      { id: 'job_d_failed', status: 'failed', finishedAt: ago(60) },
      { id: 'job_e_running', status: 'running', finishedAt: null, pages: 1 },
    ]);
    expect(await purgeExpiredResults({ db }, now, 30)).toEqual({ jobs: 2, pages: 5 });
    expect(await jobStates()).toEqual({
      job_a_old: { expired: true, pages: 0 },
      job_b_edge: { expired: true, pages: 0 },
      job_c_recent: { expired: false, pages: 2 },
      job_d_failed: { expired: false, pages: 0 },
      job_e_running: { expired: false, pages: 1 },
    });
    // Nothing left to do; a day later the recent one goes too.
    expect(await purgeExpiredResults({ db }, now, 30)).toEqual({ jobs: 0, pages: 0 });
    expect(await purgeExpiredResults({ db }, new Date(now.getTime() + DAY), 30)).toEqual({ jobs: 1, pages: 2 });
    // The job rows, their settlement included, are all still there.
    expect(Number((await sql<{ n: number }>`select count(*)::int as n from jobs`.execute(db)).rows[0].n)).toBe(5);
  });

  it('keeps the pages a cached job reads until that job expires too', async () => {
    const now = new Date('2027-03-01T12:00:00Z');
    await insertJobs([
      { id: 'job_source', finishedAt: new Date(now.getTime() - 40 * DAY), pages: 2 },
      { id: 'job_cached', finishedAt: new Date(now.getTime() - 10 * DAY), source: 'job_source' },
    ]);
    expect(await purgeExpiredResults({ db }, now, 30)).toEqual({ jobs: 1, pages: 0 });
    expect(await jobStates()).toEqual({ job_cached: { expired: false, pages: 0 }, job_source: { expired: true, pages: 2 } });
    // Twenty-one days on, the cached job's result expires, and with it the pages.
    expect(await purgeExpiredResults({ db }, new Date(now.getTime() + 21 * DAY), 30)).toEqual({ jobs: 1, pages: 2 });
    expect(await jobStates()).toEqual({ job_cached: { expired: true, pages: 0 }, job_source: { expired: true, pages: 0 } });
  });

  it('deletes the pages of a source and its cached job expired in one batch', async () => {
    const now = new Date('2027-03-01T12:00:00Z');
    await insertJobs([
      { id: 'job_source', finishedAt: new Date(now.getTime() - 40 * DAY), pages: 2 },
      { id: 'job_cached', finishedAt: new Date(now.getTime() - 35 * DAY), source: 'job_source' },
    ]);
    expect(await purgeExpiredResults({ db }, now, 30)).toEqual({ jobs: 2, pages: 2 });
  });

  it('goes in batches of at most `batchSize` jobs, one statement each', async () => {
    const now = new Date('2027-03-01T12:00:00Z');
    await insertJobs(
      Array.from({ length: 7 }, (_, i) => ({ id: `job_${i}`, finishedAt: new Date(now.getTime() - (31 + i) * DAY), pages: 1 })),
    );
    const probe = counted();
    expect(await purgeExpiredResults({ db: probe.db }, now, 30, 3)).toEqual({ jobs: 7, pages: 7 });
    // Per batch: the advisory lock, then the statement; batches of 3 + 3 + 1.
    expect(probe.statements()).toBe(6);
  });

  it('leaves the work to another replica that is expiring results already', async () => {
    const now = new Date('2027-03-01T12:00:00Z');
    await insertJobs([{ id: 'job_old', finishedAt: new Date(now.getTime() - 40 * DAY), pages: 1 }]);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let taken!: () => void;
    const locked = new Promise<void>((resolve) => (taken = resolve));
    const other = db.transaction().execute(async (tx) => {
      await sql`select pg_advisory_xact_lock(715519)`.execute(tx);
      taken();
      await released;
    });
    await locked;
    try {
      expect(await purgeExpiredResults({ db }, now, 30)).toEqual({ jobs: 0, pages: 0 });
    } finally {
      release();
      await other;
    }
    expect(await purgeExpiredResults({ db }, now, 30)).toEqual({ jobs: 1, pages: 1 });
  });
});

describe('purgeEndedSessions', () => {
  it('deletes signed-out, expired and idle sessions as of the clock, and keeps live ones', async () => {
    await sql`insert into users (id, email, password_hash) values ('usr_purge', 'purge@example.com', 'h') on conflict do nothing`.execute(
      db,
    );
    const now = new Date('2027-03-01T12:00:00Z');
    const session = (id: string, values: { lastSeen: Date; expires: Date; ended?: Date }) =>
      sql`
      insert into sessions (id, user_id, token_hash, csrf_token, created_at, last_seen_at, expires_at, ended_at)
      values (${id}, 'usr_purge', ${`hash-${id}`}, 'csrf', ${new Date(now.getTime() - 20 * DAY)}, ${values.lastSeen}, ${values.expires}, ${values.ended ?? null})
    `.execute(db);
    const soon = new Date(now.getTime() + 5 * DAY);
    await session('ses_live', { lastSeen: new Date(now.getTime() - 60_000), expires: soon });
    await session('ses_signed_out', { lastSeen: new Date(now.getTime() - 60_000), expires: soon, ended: new Date(now.getTime() - 60_000) });
    await session('ses_past_30_days', { lastSeen: new Date(now.getTime() - 60_000), expires: new Date(now.getTime() - 1) });
    await session('ses_idle', { lastSeen: new Date(now.getTime() - SESSION_IDLE_MS - 1), expires: soon });
    await session('ses_almost_idle', { lastSeen: new Date(now.getTime() - SESSION_IDLE_MS + 60_000), expires: soon });
    expect(await purgeEndedSessions(db, now, 2)).toBe(3);
    const left = await db.selectFrom('sessions').select('id').orderBy('id').execute();
    expect(left.map((r) => r.id)).toEqual(['ses_almost_idle', 'ses_live']);
    // Two minutes on, the almost idle one has been idle for seven days.
    expect(await purgeEndedSessions(db, new Date(now.getTime() + 120_000))).toBe(1);
  });
});

describe('purgeExpiredAuthTokens and purgeOldMail', () => {
  it('deletes tokens past their lifetime and mail sent or given up on a week ago, never pending mail', async () => {
    const now = new Date('2027-03-01T12:00:00Z');
    await sql`insert into users (id, email, password_hash) values ('usr_tok', 'tok@example.com', 'h') on conflict do nothing`.execute(db);
    await sql`
      insert into auth_tokens (id, user_id, purpose, token_hash, expires_at) values
        ('tok_expired', 'usr_tok', 'reset_password', 'h1', ${new Date(now.getTime() - 1)}),
        ('tok_live', 'usr_tok', 'verify_email', 'h2', ${new Date(now.getTime() + 60_000)})`.execute(db);
    const old = new Date(now.getTime() - 8 * DAY);
    await sql`
      insert into mail_outbox (id, recipient, template, subject, status, created_at) values
        ('msg_sent_old', 'a@example.com', 'verify_email', 's', 'sent', ${old}),
        ('msg_failed_old', 'a@example.com', 'verify_email', 's', 'failed', ${old}),
        ('msg_pending_old', 'a@example.com', 'verify_email', 's', 'pending', ${old}),
        ('msg_sent_new', 'a@example.com', 'verify_email', 's', 'sent', ${new Date(now.getTime() - DAY)})`.execute(db);
    expect(await purgeExpiredAuthTokens(db, now)).toBe(1);
    expect(await purgeOldMail(db, now)).toBe(2);
    const tokens = await db.selectFrom('auth_tokens').select('id').execute();
    expect(tokens.map((t) => t.id)).toEqual(['tok_live']);
    const mail = await db.selectFrom('mail_outbox').select('id').orderBy('id').execute();
    expect(mail.map((m) => m.id)).toEqual(['msg_pending_old', 'msg_sent_new']);
    await sql`delete from mail_outbox`.execute(db);
    await sql`delete from auth_tokens`.execute(db);
  });
});

describe('purgeExpiredOAuth', () => {
  it('deletes tokens past their lifetime, retired or not, and codes a day past theirs; the grant (a key) stays', async () => {
    const now = new Date('2027-03-01T12:00:00Z');
    const at = (ms: number) => new Date(now.getTime() + ms);
    await sql`insert into users (id, email, password_hash) values ('usr_oauth', 'oauth@example.com', 'h') on conflict do nothing`.execute(
      db,
    );
    await sql`insert into oauth_clients (id, client_name, redirect_uris, metadata) values ('cli_purge', 'Agent', ${['http://127.0.0.1/cb']}, '{}')`.execute(
      db,
    );
    await sql`
      insert into api_keys (id, workspace_id, secret_hash, prefix, role, kind, oauth_client_id)
      values ('key_grant_purge', ${workspaceId}, 'grant-hash', 'sdx_oat_xxxx', 'member', 'oauth', 'cli_purge')`.execute(db);
    await sql`
      insert into oauth_tokens (token_hash, key_id, kind, expires_at, retired_at) values
        ('access_expired', 'key_grant_purge', 'access', ${at(-1)}, null),
        ('access_live', 'key_grant_purge', 'access', ${at(60_000)}, null),
        ('refresh_retired_live', 'key_grant_purge', 'refresh', ${at(DAY)}, ${at(-DAY)}),
        ('refresh_retired_expired', 'key_grant_purge', 'refresh', ${at(-1)}, ${at(-2 * DAY)})`.execute(db);
    const code = (hash: string, expires: Date) => sql`
      insert into oauth_codes (code_hash, client_id, key_id, user_id, workspace_id, role, redirect_uri, code_challenge, expires_at)
      values (${hash}, 'cli_purge', 'key_grant_purge', 'usr_oauth', ${workspaceId}, 'member', 'http://127.0.0.1/cb', 'c', ${expires})`;
    await code('code_just_expired', at(-60_000)).execute(db);
    await code('code_long_expired', at(-DAY - 1)).execute(db);
    expect(await purgeExpiredOAuth(db, now, 1)).toBe(3);
    expect((await db.selectFrom('oauth_tokens').select('token_hash').orderBy('token_hash').execute()).map((t) => t.token_hash)).toEqual([
      'access_live',
      'refresh_retired_live',
    ]);
    expect((await db.selectFrom('oauth_codes').select('code_hash').execute()).map((c) => c.code_hash)).toEqual(['code_just_expired']);
    expect(await db.selectFrom('api_keys').select('id').where('id', '=', 'key_grant_purge').executeTakeFirst()).toBeDefined();
    await sql`delete from api_keys where id = 'key_grant_purge'`.execute(db);
    await sql`delete from oauth_clients where id = 'cli_purge'`.execute(db);
  });
});

describe('runRetention', () => {
  it('runs every purge as of the given time', async () => {
    const now = new Date('2027-03-01T12:00:00Z');
    await insertJobs([{ id: 'job_old', finishedAt: new Date(now.getTime() - 31 * DAY), pages: 2 }]);
    await insertKeys('old-', 3, new Date(now.getTime() - 1));
    expect(await runRetention({ db }, now, { resultRetentionDays: 30 })).toEqual({
      resultsExpired: 1,
      resultPagesDeleted: 2,
      idempotencyKeysDeleted: 3,
      sessionsDeleted: 0,
      authTokensDeleted: 0,
      oauthDeleted: 0,
      mailDeleted: 0,
      monitorPointsDeleted: 0,
      monitorPartitionsDropped: 0,
    });
    // RESULT_RETENTION_DAYS of 60 would have kept it.
    await insertJobs([{ id: 'job_older', finishedAt: new Date(now.getTime() - 50 * DAY), pages: 1 }]);
    expect((await runRetention({ db }, now, { resultRetentionDays: 60 })).resultsExpired).toBe(0);
  });
});

/** The scheduler's `retention` task alone on a runner, every `everyMs`, over a runtime of the test database. */
function startRetention(options: { everyMs: number; clock?: Clock; log?: pino.Logger }): { stop(): Promise<void> } {
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: database.url,
    REDIS_URL: testRedisUrl(),
    REDIS_PREFIX: `sdxt${randomBytes(4).toString('hex')}`,
    LOG_LEVEL: 'silent',
    RESULT_RETENTION_DAYS: '30',
  });
  const runtime = createRuntime(config, { name: 'test', providers: [], clock: options.clock ?? systemClock, log: options.log ?? log });
  const runner = new BackgroundRunner({
    tasks: [taskNamed('retention')],
    context: { services: runtime.services, redisUrl: config.redisUrl },
    redis: runtime.redis,
    everyMs: { retention: options.everyMs },
  }).start();
  return {
    async stop() {
      await runner.stop();
      await runtime.close();
    },
  };
}

describe('the retention task', () => {
  it('purges at start and then every interval, and stops', async () => {
    await insertKeys('before-', 5, new Date(Date.now() - 60_000));
    await insertKeys('live-', 2, new Date(Date.now() + 3_600_000));
    const purge = startRetention({ everyMs: 100 });
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

  it('expires results as of the injected clock', async () => {
    let now = new Date('2027-03-01T12:00:00Z');
    const clock = { now: () => now };
    await insertJobs([{ id: 'job_done', finishedAt: new Date(now.getTime() - 29 * DAY), pages: 2 }]);
    const purge = startRetention({ everyMs: 50, clock });
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect((await jobStates()).job_done).toEqual({ expired: false, pages: 2 });
      now = new Date(now.getTime() + 2 * DAY);
      await eventually(async () => (await jobStates()).job_done.expired, 10_000, 20);
      expect((await jobStates()).job_done).toEqual({ expired: true, pages: 0 });
    } finally {
      await purge.stop();
    }
  });

  it('logs a failed pass and runs the next one on time', async () => {
    const failures: { task?: string; err?: string }[] = [];
    const failing = pino(
      { level: 'warn' },
      { write: (line: string) => void failures.push(JSON.parse(line) as { task?: string; err?: string }) },
    );
    let calls = 0;
    const clock = {
      now(): Date {
        calls += 1;
        if (calls === 1) throw new Error('clock unavailable');
        return new Date();
      },
    };
    await insertKeys('old-', 3, new Date(Date.now() - 60_000));
    const purge = startRetention({ everyMs: 100, clock, log: failing });
    try {
      await eventually(async () => (await keys()).length === 0, 10_000, 20);
    } finally {
      await purge.stop();
    }
    expect(failures.filter((f) => f.task === 'retention')).toEqual([
      expect.objectContaining({ task: 'retention', err: 'clock unavailable' }),
    ]);
    expect(calls).toBeGreaterThanOrEqual(2);
  });
});
