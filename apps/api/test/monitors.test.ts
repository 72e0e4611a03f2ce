import { createApiKey, dispatchMonitors, pauseMonitorsOfCreator, purgeMonitorPoints } from '@sdx/domain/testing';
import ExcelJS from 'exceljs';
import { sql } from 'kysely';
import request from 'supertest';
import { eventually, type SeededWorkspace, startTestStack, type TestStack, untilNextSecond } from '@sdx/testing';

/**
 * Monitors through HTTP (extensions-3.md section 3): the resource and its validation, tenancy,
 * pause and resume, runs as paced batches (all or nothing, the key's cap, the active-job cap),
 * the scheduler's runs with an injected clock, and pausing a creator's monitors.
 */
class MovableClock {
  private t = Date.parse('2026-12-07T10:20:00.000Z');
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

const HOUR = 3_600_000;

interface Monitor {
  id: string;
  name: string;
  targets: string[];
  limit: number;
  frequency: string;
  time_of_day: string | null;
  day_of_week: string | null;
  timezone: string;
  status: string;
  paused_reason: string | null;
  created_by: { kind: string; id: string } | null;
  next_run_at: string | null;
  last_run_at: string | null;
  estimated_credits_per_run: number;
  estimated_credits_per_month: number;
}

interface Run {
  id: string;
  trigger: string;
  status: string;
  batch_ids: string[];
  scheduled_for: string;
  started_at: string | null;
  finished_at: string | null;
  error: { error: string; [k: string]: unknown } | null;
}

async function workspace(options: Parameters<TestStack['workspace']>[0] = {}): Promise<SeededWorkspace> {
  return stack.workspace({ rateLimitPerMinute: 100_000, ...options });
}

async function create(ws: SeededWorkspace, body: Record<string, unknown>, auth = ws.auth): Promise<Monitor> {
  const res = await stack.api.post('/v1/monitors', {
    headers: auth,
    body: { operation: 'profile', targets: ['nasa'], frequency: 'daily', ...body },
  });
  expect(res.status).toBe(201);
  return res.body as Monitor;
}

async function runs(ws: SeededWorkspace, monitorId: string): Promise<Run[]> {
  const res = await stack.api.get(`/v1/monitors/${monitorId}/runs`, { headers: ws.auth });
  expect(res.status).toBe(200);
  return res.body.data as Run[];
}

describe('creating a monitor', () => {
  it('refuses a viewer key, an operation that is not monitorable, and targets or alerts beyond the bounds', async () => {
    const ws = await workspace();
    const viewer = { 'X-API-Key': (await createApiKey(stack.runtime.db, ws.workspaceId, 'viewer', { role: 'viewer' })).api_key };
    const asViewer = await stack.api.post('/v1/monitors', {
      headers: viewer,
      body: { operation: 'profile', targets: ['nasa'], frequency: 'daily' },
    });
    expect(asViewer.status).toBe(403);

    const followers = await stack.api.post('/v1/monitors', {
      headers: ws.auth,
      body: { operation: 'followers', targets: ['nasa'], frequency: 'daily' },
    });
    expect(followers.status).toBe(422);
    expect(followers.body.detail).toMatchObject({ error: 'operation_not_monitorable', platform: 'instagram', operation: 'followers' });

    const tooMany = await stack.api.post('/v1/monitors', {
      headers: ws.auth,
      body: { operation: 'profile', targets: Array.from({ length: 1001 }, (_, i) => `user${i}`), frequency: 'daily' },
    });
    expect(tooMany.status).toBe(422);
    const none = await stack.api.post('/v1/monitors', {
      headers: ws.auth,
      body: { operation: 'profile', targets: [], frequency: 'daily' },
    });
    expect(none.status).toBe(422);
    const alerts = Array.from({ length: 21 }, () => ({ metric: 'followers_count', condition: 'above', threshold: 1 }));
    const tooManyAlerts = await stack.api.post('/v1/monitors', {
      headers: ws.auth,
      body: { operation: 'profile', targets: ['nasa'], frequency: 'daily', alerts },
    });
    expect(tooManyAlerts.status).toBe(422);
    const wrongMetric = await stack.api.post('/v1/monitors', {
      headers: ws.auth,
      body: {
        operation: 'profile',
        targets: ['nasa'],
        frequency: 'daily',
        alerts: [{ metric: 'views', condition: 'above', threshold: 1 }],
      },
    });
    expect(wrongMetric.status).toBe(422);
    const strangerTarget = await stack.api.post('/v1/monitors', {
      headers: ws.auth,
      body: {
        operation: 'profile',
        targets: ['nasa'],
        frequency: 'daily',
        alerts: [{ metric: 'followers_count', condition: 'above', threshold: 1, target: 'esa' }],
      },
    });
    expect(strangerTarget.status).toBe(422);
    const dayOfDaily = await stack.api.post('/v1/monitors', {
      headers: ws.auth,
      body: { operation: 'profile', targets: ['nasa'], frequency: 'daily', day_of_week: 'friday' },
    });
    expect(dayOfDaily.status).toBe(422);
    const badZone = await stack.api.post('/v1/monitors', {
      headers: ws.auth,
      body: { operation: 'profile', targets: ['nasa'], frequency: 'daily', timezone: 'Mars/Olympus' },
    });
    expect(badZone.status).toBe(422);
    const duplicates = await stack.api.post('/v1/monitors', {
      headers: ws.auth,
      body: { operation: 'profile', targets: ['nasa', 'NASA'], frequency: 'daily' },
    });
    expect(duplicates.status).toBe(422);
    expect(duplicates.body.detail.error).toBe('duplicate_batch_target');
    expect((await stack.api.get('/v1/monitors', { headers: ws.auth })).body).toEqual([]);
  });

  it('answers every field of the monitor, its creator and its estimates', async () => {
    const ws = await workspace();
    const res = await stack.api.post('/v1/monitors', {
      headers: ws.auth,
      body: {
        name: 'Competitors',
        operation: 'profile',
        targets: [' natgeo ', 'nasa', 'bbcnews'],
        frequency: 'daily',
        time_of_day: '09:30',
        timezone: 'Europe/Paris',
        alerts: [{ metric: 'followers_count', condition: 'change_pct_above', threshold: 2.5, target: 'NASA' }],
      },
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(
      [
        'id',
        'name',
        'platform',
        'operation',
        'targets',
        'limit',
        'frequency',
        'time_of_day',
        'day_of_week',
        'timezone',
        'status',
        'paused_reason',
        'alerts',
        'created_by',
        'next_run_at',
        'last_run_at',
        'estimated_credits_per_run',
        'estimated_credits_per_month',
        'created_at',
      ].sort(),
    );
    expect(res.body).toMatchObject({
      name: 'Competitors',
      platform: 'instagram',
      operation: 'profile',
      targets: ['natgeo', 'nasa', 'bbcnews'],
      limit: 1,
      frequency: 'daily',
      time_of_day: '09:30',
      day_of_week: null,
      timezone: 'Europe/Paris',
      status: 'active',
      paused_reason: null,
      alerts: [{ metric: 'followers_count', condition: 'change_pct_above', threshold: 2.5, target: 'nasa' }],
      created_by: { kind: 'key', id: ws.keyId },
      // 09:30 in Paris (UTC+1 in December), the first one not in the past: the next day's.
      next_run_at: '2026-12-08T08:30:00.000Z',
      last_run_at: null,
      estimated_credits_per_run: 3,
      estimated_credits_per_month: 90,
    });
    expect(res.body.id).toMatch(/^mon_/);
    expect((await stack.api.get(`/v1/monitors/${res.body.id}`, { headers: ws.auth })).body).toEqual(res.body);

    // Hourly lists at the most a run can cost: 2 credits an item, 10 items, 2 targets, 730 runs.
    const posts = await create(ws, { operation: 'posts', targets: ['a', 'b'], limit: 10, frequency: 'hourly', time_of_day: '17:45' });
    expect(posts).toMatchObject({
      time_of_day: '00:45',
      next_run_at: '2026-12-07T10:45:00.000Z',
      estimated_credits_per_run: 40,
      estimated_credits_per_month: 29_200,
    });
    const weekly = await create(ws, {
      operation: 'reels',
      frequency: 'weekly',
      day_of_week: 'wednesday',
      time_of_day: '06:00',
      timezone: 'America/New_York',
    });
    expect(weekly).toMatchObject({
      day_of_week: 'wednesday',
      next_run_at: '2026-12-09T11:00:00.000Z',
      estimated_credits_per_run: 24,
      estimated_credits_per_month: 96,
    });
    const defaults = await create(ws, { operation: 'posts', platform: 'tiktok', frequency: 'weekly' });
    expect(defaults).toMatchObject({
      name: 'tiktok posts',
      time_of_day: '00:00',
      day_of_week: 'monday',
      timezone: 'UTC',
      next_run_at: '2026-12-14T00:00:00.000Z',
    });
  });
});

describe('the monitor resource', () => {
  it('lists page by page, changes, pauses, resumes and deletes; another workspace gets 404 for each', async () => {
    const ws = await workspace();
    const other = await workspace();
    const made = [await create(ws, { name: 'one' }), await create(ws, { name: 'two' }), await create(ws, { name: 'three' })];
    const first = await stack.api.get('/v1/monitors?limit=2', { headers: ws.auth });
    expect(first.body.map((m: Monitor) => m.name)).toEqual(['three', 'two']);
    expect(first.headers.link).toBe(`</v1/monitors?limit=2&starting_after=${made[1].id}>; rel="next"`);
    const second = await stack.api.get(`/v1/monitors?limit=2&starting_after=${made[1].id}`, { headers: ws.auth });
    expect(second.body.map((m: Monitor) => m.name)).toEqual(['one']);
    expect((await stack.api.get(`/v1/monitors?starting_after=${made[1].id}`, { headers: other.auth })).status).toBe(422);

    const id = made[0].id;
    for (const [method, path] of [
      ['get', `/v1/monitors/${id}`],
      ['patch', `/v1/monitors/${id}`],
      ['delete', `/v1/monitors/${id}`],
      ['post', `/v1/monitors/${id}/pause`],
      ['post', `/v1/monitors/${id}/resume`],
      ['post', `/v1/monitors/${id}/run`],
      ['get', `/v1/monitors/${id}/runs`],
    ] as const) {
      const res = await stack.api[method](path, { headers: other.auth, ...(method === 'patch' ? { body: { name: 'stolen' } } : {}) });
      expect({ path, method, status: res.status, body: res.body }).toEqual({
        path,
        method,
        status: 404,
        body: { detail: { error: 'monitor_not_found', message: `No monitor ${id} in this workspace.`, monitor_id: id } },
      });
    }
    expect((await stack.api.get('/v1/monitors', { headers: other.auth })).body).toEqual([]);
    // Nothing the other workspace asked changed anything.
    expect((await stack.api.get(`/v1/monitors/${id}`, { headers: ws.auth })).body).toMatchObject({ name: 'one', status: 'active' });
    expect(await runs(ws, id)).toEqual([]);

    const patched = await stack.api.patch(`/v1/monitors/${id}`, {
      headers: ws.auth,
      body: { frequency: 'weekly', day_of_week: 'friday', targets: ['esa', 'nasa'] },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      name: 'one',
      frequency: 'weekly',
      day_of_week: 'friday',
      time_of_day: '00:00',
      targets: ['esa', 'nasa'],
      next_run_at: '2026-12-11T00:00:00.000Z',
    });
    const notMonitorable = await stack.api.patch(`/v1/monitors/${id}`, { headers: ws.auth, body: { operation: 'followers' } });
    expect(notMonitorable.status).toBe(422);
    const badDay = await stack.api.patch(`/v1/monitors/${id}`, { headers: ws.auth, body: { frequency: 'daily', day_of_week: 'friday' } });
    expect(badDay.status).toBe(422);

    const paused = await stack.api.post(`/v1/monitors/${id}/pause`, { headers: ws.auth });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ status: 'paused', paused_reason: 'user', next_run_at: null });
    // A paused monitor is not run by the scheduler, even long past its time.
    clock.advance(8 * 24 * HOUR);
    await dispatchMonitors(stack.runtime.services);
    expect(await runs(ws, id)).toEqual([]);
    const resumed = await stack.api.post(`/v1/monitors/${id}/resume`, { headers: ws.auth });
    expect(resumed.body).toMatchObject({ status: 'active', paused_reason: null });
    // The occurrences missed while paused are not run: the next is the first not in the past.
    expect(Date.parse(resumed.body.next_run_at)).toBeGreaterThanOrEqual(clock.now().getTime());
    expect(Date.parse(resumed.body.next_run_at)).toBeLessThanOrEqual(clock.now().getTime() + 7 * 24 * HOUR);

    expect((await stack.api.delete(`/v1/monitors/${id}`, { headers: ws.auth })).status).toBe(204);
    expect((await stack.api.get(`/v1/monitors/${id}`, { headers: ws.auth })).status).toBe(404);
    expect((await stack.api.delete(`/v1/monitors/${id}`, { headers: ws.auth })).status).toBe(404);
    expect((await stack.api.get('/v1/monitors', { headers: ws.auth })).body.map((m: Monitor) => m.name)).toEqual(['three', 'two']);
  });
});

describe('runs', () => {
  it('are all or nothing: an unaffordable run is skipped_credits and makes no batch', async () => {
    const ws = await workspace({ credits: 0 });
    await ws.grant(150);
    // 200 profiles at 1 credit: two batches, 200 credits; 150 are available.
    const monitor = await create(ws, { targets: Array.from({ length: 200 }, (_, i) => `user${i}`) });
    const res = await stack.api.post(`/v1/monitors/${monitor.id}/run`, { headers: ws.auth });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      trigger: 'manual',
      status: 'skipped_credits',
      batch_ids: [],
      error: { error: 'insufficient_credits' },
    });
    expect(res.body.finished_at).not.toBeNull();
    expect((await stack.api.get('/v1/batches', { headers: ws.auth })).body).toEqual([]);
    expect((await stack.api.get('/v1/account', { headers: ws.auth })).body.credits.available_credits).toBe(150);
    expect((await stack.api.get(`/v1/monitors/${monitor.id}`, { headers: ws.auth })).body.last_run_at).toBe(clock.now().toISOString());
  });

  it("count against the creating key's monthly cap: a run past it is skipped_credits naming spend_cap_reached", async () => {
    const ws = await workspace();
    const made = await stack.api.post('/v1/keys', { headers: ws.auth, body: { name: 'capped', role: 'member', monthly_credit_cap: 2 } });
    const capped = { 'X-API-Key': made.body.api_key as string };
    const monitor = await create(ws, { targets: ['a', 'b', 'c'] }, capped);
    expect(monitor.created_by).toEqual({ kind: 'key', id: made.body.id });
    // Another key of the workspace runs it: the run still counts against its creator's cap.
    const res = await stack.api.post(`/v1/monitors/${monitor.id}/run`, { headers: ws.auth });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      status: 'skipped_credits',
      batch_ids: [],
      error: { error: 'spend_cap_reached', scope: 'key', cap: 2, key_id: made.body.id },
    });
    expect((await stack.api.get('/v1/batches', { headers: ws.auth })).body).toEqual([]);
  });

  it('enter the queue batch after batch as the active-job cap leaves room, and complete when all their jobs ended', async () => {
    const ws = await workspace({ maxActiveJobs: 100 });
    const targets = Array.from({ length: 250 }, (_, i) => `user${i}`);
    const monitor = await create(ws, { targets });
    const started = await stack.api.post(`/v1/monitors/${monitor.id}/run`, { headers: ws.auth });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ status: 'running', error: null });
    expect(started.body.batch_ids).toHaveLength(1);
    const runId = started.body.id as string;
    const batchTargets = async (id: string) => {
      const rows = await stack.runtime.db
        .selectFrom('jobs')
        .select('target')
        .where('batch_id', '=', id)
        .orderBy('batch_position')
        .execute();
      return rows.map((r) => r.target);
    };
    expect(await batchTargets(started.body.batch_ids[0])).toEqual(targets.slice(0, 100));

    // The cap is full: advancing admits nothing more, and fails nothing.
    await dispatchMonitors(stack.runtime.services);
    let [run] = await runs(ws, monitor.id);
    expect(run).toMatchObject({ id: runId, status: 'running' });
    expect(run.batch_ids).toHaveLength(1);

    // Each time the active jobs end, the next batch enters.
    for (const [index, slice] of [
      [1, targets.slice(100, 200)],
      [2, targets.slice(200)],
    ] as const) {
      expect((await stack.api.post(`/v1/batches/${run.batch_ids[index - 1]}/cancel`, { headers: ws.auth })).status).toBe(200);
      await dispatchMonitors(stack.runtime.services);
      [run] = await runs(ws, monitor.id);
      expect(run.status).toBe('running');
      expect(run.batch_ids).toHaveLength(index + 1);
      expect(await batchTargets(run.batch_ids[index])).toEqual(slice);
    }
    expect((await stack.api.post(`/v1/batches/${run.batch_ids[2]}/cancel`, { headers: ws.auth })).status).toBe(200);
    await dispatchMonitors(stack.runtime.services);
    [run] = await runs(ws, monitor.id);
    expect(run).toMatchObject({ id: runId, status: 'completed', error: null });
    expect(run.finished_at).not.toBeNull();
    expect(new Set(run.batch_ids).size).toBe(3);
  });

  it('the scheduler runs a due monitor once per occurrence, with the injected clock', async () => {
    const ws = await workspace();
    const monitor = await create(ws, { frequency: 'hourly', targets: ['nasa', 'esa'] });
    const due = Date.parse(monitor.next_run_at!);
    expect(due).toBeGreaterThan(clock.now().getTime());
    expect(due - clock.now().getTime()).toBeLessThanOrEqual(HOUR);
    await dispatchMonitors(stack.runtime.services);
    expect(await runs(ws, monitor.id)).toEqual([]);

    clock.advance(due - clock.now().getTime() + 1000);
    await dispatchMonitors(stack.runtime.services);
    await dispatchMonitors(stack.runtime.services);
    const made = await runs(ws, monitor.id);
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ trigger: 'scheduled', scheduled_for: new Date(due).toISOString(), status: 'running' });
    expect(made[0].batch_ids).toHaveLength(1);
    const after = (await stack.api.get(`/v1/monitors/${monitor.id}`, { headers: ws.auth })).body as Monitor;
    expect(after.next_run_at).toBe(new Date(due + HOUR).toISOString());
    expect(after.last_run_at).toBe(clock.now().toISOString());
  });
});

describe('a creator who can no longer act', () => {
  it("pauses that creator's monitors only, with creator_revoked and an audit event; resuming makes the caller the creator", async () => {
    const ws = await workspace();
    const made = await stack.api.post('/v1/keys', { headers: ws.auth, body: { name: 'leaving', role: 'member' } });
    const leaving = { 'X-API-Key': made.body.api_key as string };
    const theirs = await create(ws, { name: 'theirs' }, leaving);
    const mine = await create(ws, { name: 'mine' });
    const paused = await stack.runtime.db
      .transaction()
      .execute((tx) => pauseMonitorsOfCreator(tx, ws.workspaceId, { kind: 'key', id: made.body.id }));
    expect(paused).toEqual([theirs.id]);
    const got = (await stack.api.get(`/v1/monitors/${theirs.id}`, { headers: ws.auth })).body as Monitor;
    expect(got).toMatchObject({
      status: 'paused',
      paused_reason: 'creator_revoked',
      next_run_at: null,
      created_by: { kind: 'key', id: made.body.id },
    });
    expect((await stack.api.get(`/v1/monitors/${mine.id}`, { headers: ws.auth })).body).toMatchObject({
      status: 'active',
      paused_reason: null,
    });
    const events = await stack.api.get('/v1/audit-events', { headers: ws.auth });
    expect(events.body.filter((e: { action: string }) => e.action === 'monitor.paused')).toEqual([
      expect.objectContaining({ action: 'monitor.paused', target_type: 'monitor', target_id: theirs.id }),
    ]);

    // Its time comes and goes: it is not run.
    clock.advance(2 * 24 * HOUR);
    await dispatchMonitors(stack.runtime.services);
    expect(await runs(ws, theirs.id)).toEqual([]);
    expect(await runs(ws, mine.id)).toHaveLength(1);

    const resumed = await stack.api.post(`/v1/monitors/${theirs.id}/resume`, { headers: ws.auth });
    expect(resumed.body).toMatchObject({ status: 'active', paused_reason: null, created_by: { kind: 'key', id: ws.keyId } });
  });
});

interface Series {
  target: string;
  item_id: string | null;
  metric: string;
  points: Array<{ at: string; value: number }>;
}

/** Advances the monitor's open runs until its newest run completes (a worker runs the jobs). */
async function completed(ws: SeededWorkspace, monitorId: string): Promise<Run & { observations: number }> {
  let last: Run | undefined;
  await eventually(async () => {
    await dispatchMonitors(stack.runtime.services);
    [last] = await runs(ws, monitorId);
    return last?.status === 'completed';
  }, 30_000);
  return last as Run & { observations: number };
}

async function series(ws: SeededWorkspace, monitorId: string, query = ''): Promise<Series[]> {
  const res = await stack.api.get(`/v1/monitors/${monitorId}/series${query}`, { headers: ws.auth });
  expect(res.status).toBe(200);
  return res.body.data as Series[];
}

describe('observations and series', () => {
  beforeAll(() => {
    stack.startWorker(4);
  });

  it('a first run starts every series; a later run adds a point only where a value changed', async () => {
    const ws = await workspace();
    const drifting = 'nasa_sandbox_drift_50';
    const steady = 'esa';
    const monitor = await create(ws, { targets: [drifting, steady] });
    expect((await stack.api.post(`/v1/monitors/${monitor.id}/run`, { headers: ws.auth })).status).toBe(202);
    const first = await completed(ws, monitor.id);
    expect(first.observations).toBe(6);
    const initial = await series(ws, monitor.id);
    expect(initial.map((s) => `${s.target} ${s.metric} ${s.item_id} ${s.points.length}`).sort()).toEqual([
      'esa followers_count null 1',
      'esa following_count null 1',
      'esa posts_count null 1',
      'nasa_sandbox_drift_50 followers_count null 1',
      'nasa_sandbox_drift_50 following_count null 1',
      'nasa_sandbox_drift_50 posts_count null 1',
    ]);

    // A second run in a later second: the drifting target's counts grew, the steady one's did not.
    await untilNextSecond();
    clock.advance(60_000);
    expect((await stack.api.post(`/v1/monitors/${monitor.id}/run`, { headers: ws.auth })).status).toBe(202);
    const second = await completed(ws, monitor.id);
    expect(second.observations).toBe(3);
    const followers = await series(ws, monitor.id, `?target=${drifting.toUpperCase()}&metric=followers_count`);
    expect(followers).toHaveLength(1);
    const [a, b] = followers[0].points;
    expect(b.value - a.value).toBeGreaterThanOrEqual(50);
    expect(Date.parse(b.at)).toBeGreaterThan(Date.parse(a.at));
    expect((await series(ws, monitor.id, `?target=${steady}`)).every((s) => s.points.length === 1)).toBe(true);
    // from/to bound the points; another workspace reads nothing.
    expect((await series(ws, monitor.id, `?metric=followers_count&target=${drifting}&from=${encodeURIComponent(b.at)}`))[0].points).toEqual(
      [b],
    );
    const other = await workspace();
    expect((await stack.api.get(`/v1/monitors/${monitor.id}/series`, { headers: other.auth })).status).toBe(404);
    expect((await stack.api.get(`/v1/monitors/${monitor.id}/series/export?format=csv`, { headers: other.auth })).status).toBe(404);

    // The export: one row per point, columns target, item_id, metric, at, value, as csv, xlsx and json.
    const query = `target=${drifting}&metric=followers_count`;
    const csv = await stack.api.get(`/v1/monitors/${monitor.id}/series/export?format=csv&${query}`, { headers: ws.auth });
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).toBe(`attachment; filename="${monitor.id}.csv"`);
    expect(csv.text.trimEnd().split('\r\n')).toEqual([
      '"target","item_id","metric","at","value"',
      `"${drifting}",,"followers_count","${a.at}",${a.value}`,
      `"${drifting}",,"followers_count","${b.at}",${b.value}`,
    ]);
    const json = await stack.api.get(`/v1/monitors/${monitor.id}/series/export?${query}`, { headers: ws.auth });
    expect(json.body).toEqual(
      [a, b].map((p) => ({ target: drifting, item_id: null, metric: 'followers_count', at: p.at, value: p.value })),
    );
    const xlsx = await request(stack.app)
      .get(`/v1/monitors/${monitor.id}/series/export?format=xlsx&${query}`)
      .set(ws.auth)
      .buffer(true)
      .parse((response, done) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => done(null, Buffer.concat(chunks)));
      });
    expect(xlsx.status).toBe(200);
    const book = new ExcelJS.Workbook();
    await book.xlsx.load(xlsx.body);
    const cells: unknown[] = [];
    book.worksheets[0].eachRow((row) => cells.push((row.values as unknown[]).slice(1)));
    expect(cells).toEqual([
      ['target', 'item_id', 'metric', 'at', 'value'],
      [drifting, undefined, 'followers_count', a.at, a.value],
      [drifting, undefined, 'followers_count', b.at, b.value],
    ]);
  });

  it("a list monitor keeps each returned item's metrics", async () => {
    const ws = await workspace();
    const monitor = await create(ws, { operation: 'posts', targets: ['natgeo_sandbox_drift_9'], limit: 2 });
    await stack.api.post(`/v1/monitors/${monitor.id}/run`, { headers: ws.auth });
    const run = await completed(ws, monitor.id);
    const all = await series(ws, monitor.id);
    const items = [...new Set(all.map((s) => s.item_id))];
    expect(items).toHaveLength(2);
    expect(items.every((id) => typeof id === 'string')).toBe(true);
    // Instagram photos show no views: a null is no series.
    expect(new Set(all.map((s) => s.metric)).has('likes')).toBe(true);
    expect(run.observations).toBe(all.length);
    expect(await series(ws, monitor.id, `?item_id=${items[0]}&metric=likes`)).toEqual([
      all.find((s) => s.item_id === items[0] && s.metric === 'likes'),
    ]);
  });

  it("retention deletes points older than MONITOR_RETENTION_DAYS, then drops whole months, and keeps each series' last value", async () => {
    const ws = await workspace();
    const monitor = await create(ws, { targets: ['kept_sandbox_drift_3'] });
    await stack.api.post(`/v1/monitors/${monitor.id}/run`, { headers: ws.auth });
    await completed(ws, monitor.id);
    const [point] = (await series(ws, monitor.id, '?metric=followers_count'))[0].points;
    const at = Date.parse(point.at);
    const db = stack.runtime.db;
    // Within the retention: nothing goes.
    expect(await purgeMonitorPoints(db, new Date(at + 2 * 86_400_000), 5)).toEqual({ partitionsDropped: 0, pointsDeleted: 0 });
    expect(await series(ws, monitor.id)).toHaveLength(3);
    // Older than the retention, in a month that is not wholly past it: its rows are deleted.
    const mine = await db.selectFrom('monitor_points').select('at').where('monitor_id', '=', monitor.id).execute();
    const all = Number(
      (
        await db
          .selectFrom('monitor_points')
          .select(db.fn.countAll<number>().as('n'))
          .where('at', '<=', new Date(at))
          .executeTakeFirstOrThrow()
      ).n,
    );
    const purged = await purgeMonitorPoints(db, new Date(at + 1000 + 86_400_000), 1);
    expect(purged).toEqual({ partitionsDropped: 0, pointsDeleted: all });
    expect(mine).toHaveLength(3);
    expect(await series(ws, monitor.id)).toEqual([]);
    expect(await db.selectFrom('monitor_series').select('metric').where('monitor_id', '=', monitor.id).execute()).toHaveLength(3);
    // A month wholly past the retention is dropped as a partition.
    const month = new Date(at);
    const name = `monitor_points_${month.getUTCFullYear()}_${String(month.getUTCMonth() + 1).padStart(2, '0')}`;
    const dropped = await purgeMonitorPoints(db, new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 2, 1)), 1);
    expect(dropped.partitionsDropped).toBeGreaterThanOrEqual(1);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_class where relname = ${name}`.execute(db);
    expect(rows[0].n).toBe(0);
  });
});
