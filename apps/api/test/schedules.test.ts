import { type SeededWorkspace, startTestStack, type TestStack } from '@sdx/testing';

/**
 * Schedules through HTTP: creation and validation, listing, replacement, pause/resume, manual
 * runs (queued, skipped_overlap, skipped_credits, failed), soft delete and tenancy. The clock
 * is injected so resume after missed occurrences can be checked without waiting.
 */
class MovableClock {
  private t = Date.now();
  now(): Date {
    return new Date(this.t);
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

const clock = new MovableClock();
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ clock });
});
afterAll(async () => {
  await stack.close();
});

interface Run {
  id: string;
  trigger: string;
  scheduled_for: string;
  status: string;
  job_id: string | null;
  batch_id: string | null;
  error: { error: string; message: string; [k: string]: unknown } | null;
  created_at: string;
  dispatched_at: string | null;
}

interface Schedule {
  id: string;
  name: string;
  platform: string;
  operation: string;
  targets: string[];
  requested_limit: number;
  include_posts: number;
  frequency: string;
  timezone: string;
  starts_at: string;
  next_run_at: string | null;
  last_run_at: string | null;
  status: string;
  overlap_policy: string;
  created_at: string;
  updated_at: string;
  runs: Run[];
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

async function workspace(options: Parameters<TestStack['workspace']>[0] = {}): Promise<SeededWorkspace> {
  return stack.workspace({ rateLimitPerMinute: 100_000, ...options });
}

/** An ISO local date-time with a -05:00 offset, `ms` from the clock's now, rounded to the second. */
function offsetTime(ms: number, offsetHours = -5): string {
  const t = new Date(Math.floor((clock.now().getTime() + ms) / 1000) * 1000 + offsetHours * HOUR);
  const sign = offsetHours < 0 ? '-' : '+';
  const hh = String(Math.abs(offsetHours)).padStart(2, '0');
  return `${t.toISOString().slice(0, 19)}${sign}${hh}:00`;
}

function body(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'Daily profile',
    operation: 'profile',
    targets: ['nasa'],
    frequency: 'daily',
    timezone: 'America/New_York',
    starts_at: offsetTime(2 * DAY),
    ...overrides,
  };
}

async function create(ws: SeededWorkspace, overrides: Record<string, unknown> = {}): Promise<Schedule> {
  const res = await stack.api.post('/v1/schedules', { headers: ws.auth, body: body(overrides) });
  expect(res.status).toBe(201);
  return res.body as Schedule;
}

async function get(ws: SeededWorkspace, id: string): Promise<Schedule> {
  const res = await stack.api.get(`/v1/schedules/${id}`, { headers: ws.auth });
  expect(res.status).toBe(200);
  return res.body as Schedule;
}

describe('POST /v1/schedules', () => {
  it('creates an active schedule, echoes starts_at as written, gives next_run_at in UTC and reserves nothing', async () => {
    const ws = await workspace({ credits: 100 });
    const startsAt = offsetTime(2 * DAY, 1);
    const res = await stack.api.post('/v1/schedules', {
      headers: ws.auth,
      body: body({ starts_at: startsAt, timezone: 'Europe/Paris', targets: ['  nasa  '], limit: 50 }),
    });
    expect(res.status).toBe(201);
    const s = res.body as Schedule;
    expect(s.id).toMatch(/^sch_/);
    expect(s).toMatchObject({
      name: 'Daily profile',
      platform: 'instagram',
      operation: 'profile',
      targets: ['nasa'],
      // profile delivers at most 1 result: the effective limit, as a job reports it.
      requested_limit: 1,
      include_posts: 0,
      frequency: 'daily',
      timezone: 'Europe/Paris',
      starts_at: startsAt,
      status: 'active',
      overlap_policy: 'skip',
      last_run_at: null,
      runs: [],
    });
    expect(s.next_run_at).toBe(new Date(startsAt).toISOString());
    expect(s.next_run_at!.endsWith('Z')).toBe(true);
    const usage = await stack.api.get('/v1/usage/current', { headers: ws.auth });
    expect(usage.body.credits_reserved).toBe(0);
    expect(usage.body.credits_remaining).toBe(100);
  });

  it('computes next_run_at as the first occurrence not in the past for a recurring schedule that started earlier', async () => {
    const ws = await workspace();
    const startsAt = offsetTime(-3 * DAY - HOUR);
    const s = await create(ws, { starts_at: startsAt, frequency: 'daily', timezone: 'Etc/GMT+5' });
    // Etc/GMT+5 is a fixed UTC-5 zone: daily occurrences are 24 h apart.
    const expected = new Date(new Date(startsAt).getTime() + 3 * DAY);
    // The occurrence 3 days after starts_at was an hour ago, so the next is the day after.
    expect(s.next_run_at).toBe(new Date(expected.getTime() + DAY).toISOString());
  });

  it('rejects a starts_at without offset, an unknown zone, a long name, too many or duplicate targets', async () => {
    const ws = await workspace();
    const noOffset = await stack.api.post('/v1/schedules', { headers: ws.auth, body: body({ starts_at: '2030-03-01T09:00:00' }) });
    expect(noOffset.status).toBe(422);
    expect(noOffset.body.detail[0].loc).toEqual(['body', 'starts_at']);

    const mars = await stack.api.post('/v1/schedules', { headers: ws.auth, body: body({ timezone: 'Mars/Olympus' }) });
    expect(mars.status).toBe(422);
    expect(mars.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'timezone'], type: 'value_error', input: 'Mars/Olympus' })]);

    const offsetZone = await stack.api.post('/v1/schedules', { headers: ws.auth, body: body({ timezone: '+02:00' }) });
    expect(offsetZone.status).toBe(422);
    expect(offsetZone.body.detail[0].loc).toEqual(['body', 'timezone']);

    const longName = await stack.api.post('/v1/schedules', { headers: ws.auth, body: body({ name: 'x'.repeat(121) }) });
    expect(longName.status).toBe(422);
    expect(longName.body.detail[0]).toMatchObject({ loc: ['body', 'name'], type: 'string_too_long' });
    const okName = await stack.api.post('/v1/schedules', { headers: ws.auth, body: body({ name: 'x'.repeat(120) }) });
    expect(okName.status).toBe(201);

    const many = await stack.api.post('/v1/schedules', {
      headers: ws.auth,
      body: body({ targets: Array.from({ length: 101 }, (_, i) => `user${i}`) }),
    });
    expect(many.status).toBe(422);
    expect(many.body.detail[0]).toMatchObject({ loc: ['body', 'targets'], type: 'too_long' });

    const none = await stack.api.post('/v1/schedules', { headers: ws.auth, body: body({ targets: [] }) });
    expect(none.status).toBe(422);

    const dup = await stack.api.post('/v1/schedules', { headers: ws.auth, body: body({ targets: ['nasa', 'spacex', ' NASA '] }) });
    expect(dup.status).toBe(422);
    expect(dup.body.detail.error).toBe('duplicate_batch_target');

    const unknownKey = await stack.api.post('/v1/schedules', { headers: ws.auth, body: body({ cron: '* * * * *' }) });
    expect(unknownKey.status).toBe(422);
    expect(unknownKey.body.detail[0]).toMatchObject({ loc: ['body', 'cron'], type: 'extra_forbidden' });

    const badFrequency = await stack.api.post('/v1/schedules', { headers: ws.auth, body: body({ frequency: 'hourly' }) });
    expect(badFrequency.status).toBe(422);

    const list = await stack.api.get('/v1/schedules', { headers: ws.auth });
    expect(list.body).toHaveLength(1);
  });

  it('checks the recipe as POST /v1/jobs does, at creation', async () => {
    const ws = await workspace({ maxResultLimit: 50 });
    const unsupported = await stack.api.post('/v1/schedules', {
      headers: ws.auth,
      body: body({ platform: 'twitter', operation: 'reels' }),
    });
    expect(unsupported.status).toBe(422);
    expect(unsupported.body.detail.error).toBe('unsupported_operation');

    const badTarget = await stack.api.post('/v1/schedules', { headers: ws.auth, body: body({ targets: ['nasa', 'not a user!'] }) });
    expect(badTarget.status).toBe(422);
    expect(badTarget.body.detail.error).toBe('invalid_target');
    expect(badTarget.body.detail.loc).toEqual(['body', 'targets', 1]);

    const overLimit = await stack.api.post('/v1/schedules', { headers: ws.auth, body: body({ operation: 'posts', limit: 201 }) });
    expect(overLimit.status).toBe(422);
    expect(overLimit.body.detail[0].loc).toEqual(['body', 'limit']);

    const overWorkspace = await stack.api.post('/v1/schedules', { headers: ws.auth, body: body({ operation: 'posts', limit: 100 }) });
    expect(overWorkspace.status).toBe(400);
    expect(overWorkspace.body.detail.error).toBe('invalid_request');

    const bundleElsewhere = await stack.api.post('/v1/schedules', {
      headers: ws.auth,
      body: body({ operation: 'posts', include_posts: 5 }),
    });
    expect(bundleElsewhere.status).toBe(400);
  });

  it('accepts a once schedule up to an hour in the past (it runs at once) and rejects older ones', async () => {
    const ws = await workspace();
    const recent = await create(ws, { frequency: 'once', starts_at: offsetTime(-30 * 60_000) });
    expect(recent.next_run_at).toBe(new Date(recent.starts_at).toISOString());
    const old = await stack.api.post('/v1/schedules', {
      headers: ws.auth,
      body: body({ frequency: 'once', starts_at: offsetTime(-2 * HOUR) }),
    });
    expect(old.status).toBe(422);
    expect(old.body.detail[0].loc).toEqual(['body', 'starts_at']);
  });

  it('needs credentials', async () => {
    const res = await stack.api.post('/v1/schedules', { body: body() });
    expect(res.status).toBe(401);
    expect(res.body.detail.error).toBe('missing_authentication');
  });
});

describe('GET /v1/schedules', () => {
  it('lists newest first, honours limit, and validates it', async () => {
    const ws = await workspace();
    const a = await create(ws, { name: 'a' });
    const b = await create(ws, { name: 'b' });
    const c = await create(ws, { name: 'c' });
    const all = await stack.api.get('/v1/schedules', { headers: ws.auth });
    expect(all.status).toBe(200);
    expect(all.body.map((s: Schedule) => s.id)).toEqual([c.id, b.id, a.id]);
    const two = await stack.api.get('/v1/schedules', { headers: ws.auth, query: { limit: 2 } });
    expect(two.body.map((s: Schedule) => s.id)).toEqual([c.id, b.id]);
    const bad = await stack.api.get('/v1/schedules', { headers: ws.auth, query: { limit: 101 } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['query', 'limit']);
  });
});

describe('PUT /v1/schedules/{id}', () => {
  it('replaces recipe and recurrence, recomputes next_run_at, keeps a paused schedule paused', async () => {
    const ws = await workspace();
    const s = await create(ws);
    const paused = await stack.api.post(`/v1/schedules/${s.id}/pause`, { headers: ws.auth });
    expect(paused.body.status).toBe('paused');
    clock.advance(1000);
    const startsAt = offsetTime(5 * DAY, 9);
    const res = await stack.api.put(`/v1/schedules/${s.id}`, {
      headers: ws.auth,
      body: {
        name: 'Weekly posts',
        operation: 'posts',
        targets: ['nasa', 'esa'],
        limit: 30,
        frequency: 'weekly',
        timezone: 'Asia/Tokyo',
        starts_at: startsAt,
      },
    });
    expect(res.status).toBe(200);
    const u = res.body as Schedule;
    expect(u).toMatchObject({
      id: s.id,
      name: 'Weekly posts',
      operation: 'posts',
      targets: ['nasa', 'esa'],
      requested_limit: 30,
      frequency: 'weekly',
      timezone: 'Asia/Tokyo',
      starts_at: startsAt,
      status: 'paused',
      created_at: s.created_at,
    });
    expect(u.next_run_at).toBe(new Date(startsAt).toISOString());
    expect(new Date(u.updated_at).getTime()).toBeGreaterThan(new Date(s.updated_at).getTime());
    const again = await get(ws, s.id);
    expect(again).toEqual(u);
  });

  it('validates the body as creation does', async () => {
    const ws = await workspace();
    const s = await create(ws);
    const res = await stack.api.put(`/v1/schedules/${s.id}`, { headers: ws.auth, body: body({ timezone: 'Mars/Olympus' }) });
    expect(res.status).toBe(422);
    const partial = await stack.api.put(`/v1/schedules/${s.id}`, { headers: ws.auth, body: { name: 'only a name' } });
    expect(partial.status).toBe(422);
    expect((await get(ws, s.id)).timezone).toBe('America/New_York');
  });
});

describe('pause and resume', () => {
  it('resume moves next_run_at past the occurrences missed while paused', async () => {
    const ws = await workspace();
    const s = await create(ws, { starts_at: offsetTime(HOUR), timezone: 'Etc/GMT+5' });
    expect((await stack.api.post(`/v1/schedules/${s.id}/pause`, { headers: ws.auth })).body.status).toBe('paused');
    // Pausing twice changes nothing.
    const twice = await stack.api.post(`/v1/schedules/${s.id}/pause`, { headers: ws.auth });
    expect(twice.status).toBe(200);
    expect(twice.body.status).toBe('paused');
    expect(twice.body.next_run_at).toBe(s.next_run_at);

    clock.advance(3 * DAY);
    const resumed = await stack.api.post(`/v1/schedules/${s.id}/resume`, { headers: ws.auth });
    expect(resumed.status).toBe(200);
    expect(resumed.body.status).toBe('active');
    // Three occurrences passed while paused (starts_at, +1 d, +2 d); the next is starts_at + 3 d.
    expect(resumed.body.next_run_at).toBe(new Date(new Date(s.next_run_at!).getTime() + 3 * DAY).toISOString());
    expect(resumed.body.runs).toEqual([]);
    const again = await stack.api.post(`/v1/schedules/${s.id}/resume`, { headers: ws.auth });
    expect(again.body).toEqual(resumed.body);
  });

  it('refuses to resume a once schedule whose occurrence passed while paused', async () => {
    const ws = await workspace();
    const s = await create(ws, { frequency: 'once', starts_at: offsetTime(HOUR) });
    await stack.api.post(`/v1/schedules/${s.id}/pause`, { headers: ws.auth });
    clock.advance(2 * HOUR);
    const res = await stack.api.post(`/v1/schedules/${s.id}/resume`, { headers: ws.auth });
    expect(res.status).toBe(400);
    expect(res.body.detail.error).toBe('invalid_request');
    expect((await get(ws, s.id)).status).toBe('paused');
  });
});

describe('POST /v1/schedules/{id}/run', () => {
  it('dispatches a job for one target, then skips while it is still active', async () => {
    const ws = await workspace({ credits: 100 });
    const s = await create(ws);
    const res = await stack.api.post(`/v1/schedules/${s.id}/run`, { headers: ws.auth });
    expect(res.status).toBe(202);
    const after = res.body as Schedule;
    expect(after.runs).toHaveLength(1);
    const run = after.runs[0];
    expect(run).toMatchObject({
      trigger: 'manual',
      status: 'queued',
      batch_id: null,
      error: null,
      scheduled_for: clock.now().toISOString(),
    });
    expect(run.id).toMatch(/^run_/);
    expect(run.job_id).toMatch(/^job_/);
    expect(run.dispatched_at).not.toBeNull();
    expect(after.next_run_at).toBe(s.next_run_at);
    expect(after.status).toBe('active');
    expect(after.last_run_at).toBe(clock.now().toISOString());

    const job = await stack.api.get(`/v1/jobs/${run.job_id}`, { headers: ws.auth });
    expect(job.status).toBe(200);
    expect(job.body).toMatchObject({ status: 'queued', target: 'nasa', operation: 'profile' });
    const usage = await stack.api.get('/v1/usage/current', { headers: ws.auth });
    expect(usage.body.credits_reserved).toBe(1);

    clock.advance(1000);
    const second = await stack.api.post(`/v1/schedules/${s.id}/run`, { headers: ws.auth });
    expect(second.status).toBe(202);
    expect(second.body.runs).toHaveLength(2);
    expect(second.body.runs[0]).toMatchObject({
      trigger: 'manual',
      status: 'skipped_overlap',
      job_id: null,
      batch_id: null,
      dispatched_at: null,
    });
    expect(second.body.runs[1].id).toBe(run.id);

    // Once the previous work is over, the next run dispatches again.
    expect((await stack.api.post(`/v1/jobs/${run.job_id}/cancel`, { headers: ws.auth })).status).toBe(200);
    clock.advance(1000);
    const third = await stack.api.post(`/v1/schedules/${s.id}/run`, { headers: ws.auth });
    expect(third.body.runs[0]).toMatchObject({ status: 'queued' });
    expect(third.body.runs[0].job_id).not.toBe(run.job_id);
  });

  it('dispatches a batch for several targets', async () => {
    const ws = await workspace({ credits: 100 });
    const s = await create(ws, { targets: ['nasa', 'esa', 'jaxa'] });
    const res = await stack.api.post(`/v1/schedules/${s.id}/run`, { headers: ws.auth });
    expect(res.status).toBe(202);
    const run = res.body.runs[0] as Run;
    expect(run).toMatchObject({ status: 'queued', job_id: null });
    const batch = await stack.api.get(`/v1/batches/${run.batch_id}`, { headers: ws.auth });
    expect(batch.status).toBe(200);
    expect(batch.body).toMatchObject({ target_count: 3, reserved_credits: 3 });
    expect(batch.body.jobs.map((j: { target: string }) => j.target)).toEqual(['nasa', 'esa', 'jaxa']);
  });

  it('records skipped_credits and creates nothing when the batch is not affordable', async () => {
    const ws = await workspace({ credits: 2 });
    const s = await create(ws, { targets: ['nasa', 'esa', 'jaxa'] });
    const res = await stack.api.post(`/v1/schedules/${s.id}/run`, { headers: ws.auth });
    expect(res.status).toBe(202);
    const run = res.body.runs[0] as Run;
    expect(run).toMatchObject({ status: 'skipped_credits', job_id: null, batch_id: null, dispatched_at: null });
    expect(run.error).toMatchObject({ error: 'insufficient_credits', available: 2 });
    expect(res.body.last_run_at).toBe(clock.now().toISOString());
    expect((await stack.api.get('/v1/batches', { headers: ws.auth })).body).toEqual([]);
    expect((await stack.api.get('/v1/jobs', { headers: ws.auth })).body).toEqual([]);
    const usage = await stack.api.get('/v1/usage/current', { headers: ws.auth });
    expect(usage.body).toMatchObject({ credits_reserved: 0, credits_remaining: 2 });
  });

  it('records failed with the service error when dispatch is refused otherwise', async () => {
    const ws = await workspace({ credits: 100, maxActiveJobs: 2 });
    const s = await create(ws, { targets: ['nasa', 'esa', 'jaxa'] });
    const res = await stack.api.post(`/v1/schedules/${s.id}/run`, { headers: ws.auth });
    expect(res.status).toBe(202);
    expect(res.body.runs[0]).toMatchObject({ status: 'failed', job_id: null, batch_id: null });
    expect(res.body.runs[0].error).toMatchObject({ error: 'concurrent_job_limit_exceeded', limit: 2 });
    expect(typeof res.body.runs[0].error.message).toBe('string');
  });

  it('runs a paused schedule on request without resuming it', async () => {
    const ws = await workspace();
    const s = await create(ws);
    await stack.api.post(`/v1/schedules/${s.id}/pause`, { headers: ws.auth });
    const res = await stack.api.post(`/v1/schedules/${s.id}/run`, { headers: ws.auth });
    expect(res.status).toBe(202);
    expect(res.body.status).toBe('paused');
    expect(res.body.runs[0].status).toBe('queued');
  });
});

describe('DELETE /v1/schedules/{id}', () => {
  it('soft-deletes: 204, then 404 schedule_not_found everywhere; the jobs it made remain', async () => {
    const ws = await workspace();
    const s = await create(ws);
    const run = await stack.api.post(`/v1/schedules/${s.id}/run`, { headers: ws.auth });
    const jobId = run.body.runs[0].job_id as string;
    const del = await stack.api.delete(`/v1/schedules/${s.id}`, { headers: ws.auth });
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    for (const call of [
      () => stack.api.get(`/v1/schedules/${s.id}`, { headers: ws.auth }),
      () => stack.api.put(`/v1/schedules/${s.id}`, { headers: ws.auth, body: body() }),
      () => stack.api.delete(`/v1/schedules/${s.id}`, { headers: ws.auth }),
      () => stack.api.post(`/v1/schedules/${s.id}/pause`, { headers: ws.auth }),
      () => stack.api.post(`/v1/schedules/${s.id}/resume`, { headers: ws.auth }),
      () => stack.api.post(`/v1/schedules/${s.id}/run`, { headers: ws.auth }),
    ]) {
      const res = await call();
      expect(res.status).toBe(404);
      expect(res.body.detail).toMatchObject({ error: 'schedule_not_found', schedule_id: s.id });
    }
    expect((await stack.api.get('/v1/schedules', { headers: ws.auth })).body).toEqual([]);
    expect((await stack.api.get(`/v1/jobs/${jobId}`, { headers: ws.auth })).status).toBe(200);
    const row = await stack.runtime.db.selectFrom('schedules').select(['deleted_at']).where('id', '=', s.id).executeTakeFirstOrThrow();
    expect(row.deleted_at).not.toBeNull();
  });
});

describe('tenancy', () => {
  it("answers 404 for another workspace's schedule on every route", async () => {
    const owner = await workspace();
    const other = await workspace();
    const s = await create(owner);
    for (const call of [
      () => stack.api.get(`/v1/schedules/${s.id}`, { headers: other.auth }),
      () => stack.api.put(`/v1/schedules/${s.id}`, { headers: other.auth, body: body() }),
      () => stack.api.delete(`/v1/schedules/${s.id}`, { headers: other.auth }),
      () => stack.api.post(`/v1/schedules/${s.id}/pause`, { headers: other.auth }),
      () => stack.api.post(`/v1/schedules/${s.id}/resume`, { headers: other.auth }),
      () => stack.api.post(`/v1/schedules/${s.id}/run`, { headers: other.auth }),
    ]) {
      const res = await call();
      expect(res.status).toBe(404);
      expect(res.body.detail.error).toBe('schedule_not_found');
    }
    expect((await stack.api.get('/v1/schedules', { headers: other.auth })).body).toEqual([]);
    const mine = await get(owner, s.id);
    expect(mine).toMatchObject({ status: 'active', runs: [] });
    expect(mine.updated_at).toBe(s.updated_at);
  });
});
