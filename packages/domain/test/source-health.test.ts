import { sql } from 'kysely';
import pino from 'pino';
import { Writable } from 'node:stream';
import type { Db } from '@sdx/db';
import {
  DOWN_AFTER_AUTH_FAILURES,
  quotaDayOf,
  readSourceHealth,
  recordAttemptSources,
  recordSourceHealth,
  SourceHealthGate,
  sourceHealthSamples,
} from '@sdx/domain/testing';
import { scrape } from '@sdx/metrics';
import type { SourceReport } from '@sdx/providers';
import { createTestDb } from '@sdx/testing';

/** Issue 38, item 4: each live source's health, shared by every worker through Postgres. */
describe('source health', () => {
  let database: Awaited<ReturnType<typeof createTestDb>>;
  let db: Db;
  const lines: Array<Record<string, unknown>> = [];
  const log = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    }),
  );
  let now = new Date('2026-11-27T12:00:00Z');
  const clock = { now: () => now };

  beforeAll(async () => {
    database = await createTestDb();
    db = database.db;
    await sql`insert into workspaces (id, name, monthly_quota, rate_limit_per_minute, max_result_limit, max_active_jobs) values ('ws_h', 'h', 10, 60, 100, 10)`.execute(
      db,
    );
    await sql`
      insert into jobs (id, workspace_id, platform, operation, target, normalized_target, request_key, requested_limit, status, max_attempts, credit_rate, results_per_credit, base_credits)
      values ('job_h', 'ws_h', 'youtube', 'shorts', 'x', 'x', 'k', 10, 'running', 4, 1, 1, 0)`.execute(db);
  });
  afterAll(() => database.drop());

  const refused = (provider = 'youtube-data-api'): SourceReport => ({
    source: 'official',
    provider,
    outcome: 'failed',
    error_code: 'upstream_auth',
    quota: null,
  });
  const served = (provider = 'youtube-data-api', quota: SourceReport['quota'] = null): SourceReport => ({
    source: 'official',
    provider,
    outcome: 'served',
    error_code: null,
    quota,
  });
  const healthOf = async (provider: string) => (await readSourceHealth(db, now)).find((h) => h.provider === provider);

  it(`marks a source down after ${DOWN_AFTER_AUTH_FAILURES} authentication failures in a row, with a log line and a metric; a success brings it back`, async () => {
    for (let i = 1; i < DOWN_AFTER_AUTH_FAILURES; i++) await recordSourceHealth({ db, log, clock }, [refused()]);
    expect(await healthOf('youtube-data-api')).toMatchObject({
      status: 'up',
      auth_failures: DOWN_AFTER_AUTH_FAILURES - 1,
      last_success_at: null,
    });
    expect(lines.some((l) => String(l.msg).includes('marked down'))).toBe(false);

    await recordSourceHealth({ db, log, clock }, [refused()]);
    expect(await healthOf('youtube-data-api')).toMatchObject({
      status: 'down',
      down_since: now.toISOString(),
      auth_failures: DOWN_AFTER_AUTH_FAILURES,
    });
    expect(lines.filter((l) => String(l.msg).includes('youtube-data-api marked down'))).toHaveLength(1);
    expect((await scrape()).body).toMatch(/sdx_source_marked_down_total\{provider="youtube-data-api"\} 1/);

    // More refusals keep it down without another log line.
    await recordSourceHealth({ db, log, clock }, [refused()]);
    expect(lines.filter((l) => String(l.msg).includes('marked down'))).toHaveLength(1);

    now = new Date(now.getTime() + 60_000);
    await recordSourceHealth({ db, log, clock }, [served()]);
    expect(await healthOf('youtube-data-api')).toMatchObject({
      status: 'up',
      down_since: null,
      auth_failures: 0,
      last_success_at: now.toISOString(),
    });
  });

  it('other failures neither count toward the mark nor end a run of refusals', async () => {
    const other: SourceReport = {
      source: 'vendor',
      provider: 'scrapecreators',
      outcome: 'failed',
      error_code: 'rate_limited',
      quota: null,
    };
    await recordSourceHealth({ db, log, clock }, [refused('scrapecreators'), other, refused('scrapecreators')]);
    expect(await healthOf('scrapecreators')).toMatchObject({ auth_failures: 2, status: 'up', source: 'official' });
  });

  it("error rate over 15 minutes from the attempts' tries; quota left as stated, or counted against the day", async () => {
    now = new Date('2026-11-27T20:00:00Z');
    const t = (minutesAgo: number) => new Date(now.getTime() - minutesAgo * 60_000);
    await db.deleteFrom('job_attempt_sources').execute();
    await recordAttemptSources(db, 'job_h', 1, [refused('x-api-v2'), served('x-api-v2')]);
    await recordAttemptSources(db, 'job_h', 2, [served('x-api-v2')]);
    await recordAttemptSources(db, 'job_h', 3, [refused('x-api-v2')]);
    await db
      .updateTable('job_attempt_sources')
      .set({ created_at: t(5) })
      .where('attempt', '<', 3)
      .execute();
    // An old failure, outside the window.
    await db
      .updateTable('job_attempt_sources')
      .set({ created_at: t(30) })
      .where('attempt', '=', 3)
      .execute();
    await recordSourceHealth({ db, log, clock }, [served('x-api-v2', { unit: 'requests', used: 0, remaining: 897, limit: null })]);
    expect(await healthOf('x-api-v2')).toMatchObject({
      attempts_15m: 3,
      error_rate_15m: 0.333,
      quota: { unit: 'requests', remaining: 897, used_today: null },
    });

    // YouTube: units counted per attempt, summed over the Pacific day, against 10,000.
    const yt = (used: number) => served('yt-counted', { unit: 'units a day', used, remaining: null, limit: 10_000 });
    await recordSourceHealth({ db, log, clock }, [yt(101)]);
    await recordSourceHealth({ db, log, clock }, [yt(3)]);
    expect(await healthOf('yt-counted')).toMatchObject({ quota: { unit: 'units a day', remaining: 10_000 - 104, used_today: 104 } });
    // Past midnight Pacific, the count starts again.
    now = new Date('2026-11-28T09:00:00Z');
    expect(quotaDayOf(now)).toBe('2026-11-28');
    expect(await healthOf('yt-counted')).toMatchObject({ quota: { remaining: 10_000, used_today: 0 } });
    await recordSourceHealth({ db, log, clock }, [yt(2)]);
    expect(await healthOf('yt-counted')).toMatchObject({ quota: { remaining: 9_998, used_today: 2 } });

    const samples = await sourceHealthSamples(db, now);
    expect(samples.find((s) => s.provider === 'yt-counted')).toMatchObject({ down: false, quota_remaining: 9_998 });
  });

  it('the gate skips a source marked down, lets one probe through a minute, and reads the marks of every worker', async () => {
    let clockMs = 1_000_000;
    const gate = new SourceHealthGate(db, { refreshMs: 5_000, probeIntervalMs: 60_000, now: () => clockMs });
    await db.updateTable('source_health').set({ down_since: new Date() }).where('provider', '=', 'scrapecreators').execute();
    await gate.refresh();
    expect(gate.usable('youtube-data-api')).toBe(true);
    expect(gate.usable('scrapecreators')).toBe(true); // the probe
    expect(gate.usable('scrapecreators')).toBe(false);
    clockMs += 30_000;
    expect(gate.usable('scrapecreators')).toBe(false);
    clockMs += 31_000;
    expect(gate.usable('scrapecreators')).toBe(true); // the next probe
    // Another worker's success ends the mark: read at the next refresh.
    await recordSourceHealth({ db, log, clock }, [served('scrapecreators')]);
    await gate.refresh();
    expect(gate.usable('scrapecreators')).toBe(true);
    expect(gate.usable('scrapecreators')).toBe(true);
  });
});
