import type { ScheduleRunRow } from '@sdx/db';
import { createJob, holdRuns, SCHEDULE_RUN_ENDPOINT, scheduleTenant } from '@sdx/domain/testing';
import { claimDueRuns, dispatchDue, RECOVERY_GRACE_MS, recoverStalledRuns } from '@sdx/scheduler-engine';
import { type SeededWorkspace, startTestStack, type TestStack } from '@sdx/testing';

/**
 * The scheduler engine against a real database, with a clock the test moves: DST-true daily
 * dispatch across the March and November transitions, once schedules, catch-up after downtime,
 * pause, credits, overlap, and recovery of runs a dead process left undispatched.
 */
class MovableClock {
  private t = Date.parse('2026-03-01T00:00:00Z');
  now(): Date {
    return new Date(this.t);
  }
  set(iso: string | number): void {
    this.t = typeof iso === 'number' ? iso : Date.parse(iso);
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const clock = new MovableClock();
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ clock });
});
afterAll(async () => {
  await stack.close();
});
afterEach(async () => {
  // Schedules of one test must not become due during another's dispatch calls.
  await stack.runtime.db.updateTable('schedules').set({ status: 'paused' }).where('status', '=', 'active').execute();
});

async function workspace(options: Parameters<TestStack['workspace']>[0] = {}): Promise<SeededWorkspace> {
  return stack.workspace({ rateLimitPerMinute: 100_000, ...options });
}

async function createSchedule(ws: SeededWorkspace, body: Record<string, unknown>): Promise<{ id: string; next_run_at: string | null }> {
  const res = await stack.api.post('/v1/schedules', {
    headers: ws.auth,
    body: { name: 'test', operation: 'profile', targets: ['nasa'], frequency: 'daily', timezone: 'America/New_York', ...body },
  });
  expect(res.status).toBe(201);
  return res.body;
}

async function runsOf(scheduleId: string): Promise<ScheduleRunRow[]> {
  return stack.runtime.db.selectFrom('schedule_runs').selectAll().where('schedule_id', '=', scheduleId).orderBy('scheduled_for').execute();
}

async function scheduleRow(id: string) {
  return stack.runtime.db.selectFrom('schedules').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** Moves the clock from `fromIso` to `toIso` in `stepMs` steps, dispatching at each; ends the work each run made. */
async function walk(ws: SeededWorkspace, fromIso: string, toIso: string, stepMs: number): Promise<void> {
  for (let t = Date.parse(fromIso); t <= Date.parse(toIso); t += stepMs) {
    clock.set(t);
    const { runs } = await dispatchDue(stack.runtime.services);
    for (const run of runs) {
      expect(run.status).toBe('queued');
      // The job would run on a worker; cancelling ends it so the next day does not overlap.
      const res = await stack.api.post(`/v1/jobs/${run.job_id}/cancel`, { headers: ws.auth });
      expect(res.status).toBe(200);
    }
  }
}

describe('daily America/New_York 09:00 across both DST transitions', () => {
  it('dispatches every day at local 09:00, exactly once a day, and drops what downtime missed', async () => {
    clock.set('2026-03-01T00:00:00Z');
    const ws = await workspace({ credits: 1000 });
    const s = await createSchedule(ws, { starts_at: '2026-03-01T09:00:00-05:00' });
    expect(s.next_run_at).toBe('2026-03-01T14:00:00.000Z');

    await walk(ws, '2026-03-01T00:00:00Z', '2026-03-31T23:59:00Z', 30 * MINUTE);
    const march = await runsOf(s.id);
    // Clocks go forward on 8 March 2026 in New York: 09:00 is 14:00Z before, 13:00Z after.
    const expectedMarch = Array.from({ length: 31 }, (_, i) => new Date(Date.UTC(2026, 2, i + 1, i + 1 < 8 ? 14 : 13)).toISOString());
    expect(march.map((r) => r.scheduled_for.toISOString())).toEqual(expectedMarch);
    for (const run of march) {
      expect(run).toMatchObject({ trigger: 'scheduled', status: 'queued', batch_id: null });
      expect(run.job_id).toMatch(/^job_/);
      // Dispatched at the first tick at or after the occurrence, never before.
      expect(run.created_at.getTime()).toBeGreaterThanOrEqual(run.scheduled_for.getTime());
      expect(run.created_at.getTime()).toBeLessThan(run.scheduled_for.getTime() + 30 * MINUTE);
    }
    expect(new Set(march.map((r) => r.job_id)).size).toBe(31);

    // Down from 1 April to 25 October: the latest missed occurrence is hours old, so nothing runs.
    clock.set('2026-10-25T00:00:00Z');
    const late = await dispatchDue(stack.runtime.services);
    expect(late.runs.filter((r) => r.schedule_id === s.id)).toEqual([]);
    expect(late.dropped).toBe(1);
    expect((await scheduleRow(s.id)).next_run_at?.toISOString()).toBe('2026-10-25T13:00:00.000Z');

    await walk(ws, '2026-10-25T00:00:00Z', '2026-11-10T23:59:00Z', 30 * MINUTE);
    const autumn = (await runsOf(s.id)).slice(31);
    // Clocks go back on 1 November 2026: 09:00 is 13:00Z before, 14:00Z from then on.
    const expectedAutumn = [
      ...Array.from({ length: 7 }, (_, i) => new Date(Date.UTC(2026, 9, 25 + i, 13)).toISOString()),
      ...Array.from({ length: 10 }, (_, i) => new Date(Date.UTC(2026, 10, 1 + i, 14)).toISOString()),
    ];
    expect(autumn.map((r) => r.scheduled_for.toISOString())).toEqual(expectedAutumn);
    const row = await scheduleRow(s.id);
    expect(row.next_run_at?.toISOString()).toBe('2026-11-11T14:00:00.000Z');
    expect(row.last_run_at?.getTime()).toBeGreaterThanOrEqual(Date.parse('2026-11-10T14:00:00Z'));
  });
});

describe('once schedules', () => {
  it('runs at starts_at, then completes with next_run_at null', async () => {
    clock.set('2026-06-01T12:00:00Z');
    const ws = await workspace();
    const s = await createSchedule(ws, { frequency: 'once', timezone: 'Europe/London', starts_at: '2026-06-01T14:00:00+01:00' });
    clock.set('2026-06-01T12:59:59Z');
    expect((await dispatchDue(stack.runtime.services)).runs.filter((r) => r.schedule_id === s.id)).toEqual([]);
    clock.set('2026-06-01T13:00:01Z');
    const { runs } = await dispatchDue(stack.runtime.services);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ schedule_id: s.id, status: 'queued', trigger: 'scheduled' });
    expect(runs[0].scheduled_for.toISOString()).toBe('2026-06-01T13:00:00.000Z');
    const row = await scheduleRow(s.id);
    expect(row).toMatchObject({ status: 'completed', next_run_at: null });
    expect(row.last_run_at?.toISOString()).toBe('2026-06-01T13:00:01.000Z');
    clock.advance(DAY);
    expect((await dispatchDue(stack.runtime.services)).runs).toEqual([]);
    const api = await stack.api.get(`/v1/schedules/${s.id}`, { headers: ws.auth });
    expect(api.body).toMatchObject({ status: 'completed', next_run_at: null, starts_at: '2026-06-01T14:00:00+01:00' });
    expect(api.body.runs).toHaveLength(1);
    expect(api.body.runs[0]).toMatchObject({ trigger: 'scheduled', scheduled_for: '2026-06-01T13:00:00.000Z', status: 'queued' });
  });

  it('a once schedule missed by more than an hour completes without running', async () => {
    clock.set('2026-06-02T12:00:00Z');
    const ws = await workspace();
    const s = await createSchedule(ws, { frequency: 'once', timezone: 'UTC', starts_at: '2026-06-02T12:30:00Z' });
    clock.set('2026-06-02T13:31:00Z');
    const result = await dispatchDue(stack.runtime.services);
    expect(result.runs).toEqual([]);
    expect(result.dropped).toBe(1);
    expect(await scheduleRow(s.id)).toMatchObject({ status: 'completed', next_run_at: null, last_run_at: null });
    expect(await runsOf(s.id)).toEqual([]);
  });
});

describe('catch-up after downtime', () => {
  it('dispatches only the latest missed occurrence when it is within an hour', async () => {
    clock.set('2026-07-01T00:00:00Z');
    const ws = await workspace();
    const s = await createSchedule(ws, { timezone: 'UTC', starts_at: '2026-07-01T09:00:00Z' });
    // Down for three days; back at 09:40 on the fourth.
    clock.set('2026-07-04T09:40:00Z');
    const { runs } = await dispatchDue(stack.runtime.services);
    expect(runs).toHaveLength(1);
    expect(runs[0].scheduled_for.toISOString()).toBe('2026-07-04T09:00:00.000Z');
    expect((await scheduleRow(s.id)).next_run_at?.toISOString()).toBe('2026-07-05T09:00:00.000Z');
    expect((await dispatchDue(stack.runtime.services)).runs).toEqual([]);
    expect(await runsOf(s.id)).toHaveLength(1);
  });

  it('drops missed occurrences when the latest is more than an hour old', async () => {
    clock.set('2026-07-10T00:00:00Z');
    const ws = await workspace();
    const s = await createSchedule(ws, { timezone: 'UTC', starts_at: '2026-07-10T09:00:00Z' });
    clock.set('2026-07-12T10:00:01Z');
    const result = await dispatchDue(stack.runtime.services);
    expect(result.runs).toEqual([]);
    expect(result.dropped).toBe(1);
    expect((await scheduleRow(s.id)).next_run_at?.toISOString()).toBe('2026-07-13T09:00:00.000Z');
    clock.set('2026-07-13T09:00:00Z');
    const next = await dispatchDue(stack.runtime.services);
    expect(next.runs.map((r) => r.scheduled_for.toISOString())).toEqual(['2026-07-13T09:00:00.000Z']);
  });
});

describe('paused and deleted schedules', () => {
  it('dispatch nothing', async () => {
    clock.set('2026-08-01T00:00:00Z');
    const ws = await workspace();
    const paused = await createSchedule(ws, { timezone: 'UTC', starts_at: '2026-08-01T09:00:00Z' });
    const deleted = await createSchedule(ws, { timezone: 'UTC', starts_at: '2026-08-01T09:00:00Z', targets: ['esa'] });
    expect((await stack.api.post(`/v1/schedules/${paused.id}/pause`, { headers: ws.auth })).status).toBe(200);
    expect((await stack.api.delete(`/v1/schedules/${deleted.id}`, { headers: ws.auth })).status).toBe(204);
    clock.set('2026-08-01T09:00:00Z');
    expect((await dispatchDue(stack.runtime.services)).claimed).toBe(0);
    expect(await runsOf(paused.id)).toEqual([]);
    expect(await runsOf(deleted.id)).toEqual([]);
  });
});

describe('credits', () => {
  it('records skipped_credits for an unaffordable batch occurrence, creating nothing, and dispatches once credits arrive', async () => {
    clock.set('2026-09-01T00:00:00Z');
    const ws = await workspace({ credits: 2 });
    const s = await createSchedule(ws, { timezone: 'UTC', starts_at: '2026-09-01T09:00:00Z', targets: ['nasa', 'esa', 'jaxa'] });
    clock.set('2026-09-01T09:00:00Z');
    const first = await dispatchDue(stack.runtime.services);
    expect(first.runs).toHaveLength(1);
    expect(first.runs[0]).toMatchObject({ status: 'skipped_credits', job_id: null, batch_id: null, dispatched_at: null });
    expect(first.runs[0].error).toMatchObject({ error: 'insufficient_credits', available: 2 });
    expect(await stack.runtime.db.selectFrom('batches').select('id').where('workspace_id', '=', ws.workspaceId).execute()).toEqual([]);
    expect(await stack.runtime.db.selectFrom('jobs').select('id').where('workspace_id', '=', ws.workspaceId).execute()).toEqual([]);
    expect((await scheduleRow(s.id)).last_run_at?.toISOString()).toBe('2026-09-01T09:00:00.000Z');

    await ws.grant(10);
    clock.set('2026-09-02T09:00:00Z');
    const second = await dispatchDue(stack.runtime.services);
    expect(second.runs).toHaveLength(1);
    expect(second.runs[0]).toMatchObject({ status: 'queued', job_id: null });
    const batch = await stack.api.get(`/v1/batches/${second.runs[0].batch_id}`, { headers: ws.auth });
    expect(batch.body).toMatchObject({ target_count: 3, reserved_credits: 3, status: 'queued' });
  });
});

describe('overlap_policy skip', () => {
  it('skips an occurrence while the previous batch still has active children', async () => {
    clock.set('2026-09-10T00:00:00Z');
    const ws = await workspace({ credits: 100 });
    const s = await createSchedule(ws, { timezone: 'UTC', starts_at: '2026-09-10T09:00:00Z', targets: ['nasa', 'esa'] });
    clock.set('2026-09-10T09:00:00Z');
    const first = (await dispatchDue(stack.runtime.services)).runs[0];
    expect(first.status).toBe('queued');
    const children = await stack.runtime.db.selectFrom('jobs').select('id').where('batch_id', '=', first.batch_id).execute();
    // One child finishes; the other is still queued: the batch's work is active.
    await stack.api.post(`/v1/jobs/${children[0].id}/cancel`, { headers: ws.auth });
    clock.set('2026-09-11T09:00:00Z');
    const second = (await dispatchDue(stack.runtime.services)).runs[0];
    expect(second).toMatchObject({ status: 'skipped_overlap', job_id: null, batch_id: null, error: null, dispatched_at: null });
    expect((await scheduleRow(s.id)).last_run_at?.toISOString()).toBe('2026-09-11T09:00:00.000Z');
    await stack.api.post(`/v1/jobs/${children[1].id}/cancel`, { headers: ws.auth });
    clock.set('2026-09-12T09:00:00Z');
    const third = (await dispatchDue(stack.runtime.services)).runs[0];
    expect(third.status).toBe('queued');
    expect(third.batch_id).not.toBe(first.batch_id);
  });
});

describe('recovery of runs a dead scheduler left undispatched', () => {
  it('re-dispatches a run claimed but never dispatched, once', async () => {
    clock.set('2026-10-01T00:00:00Z');
    const ws = await workspace();
    const s = await createSchedule(ws, { timezone: 'UTC', starts_at: '2026-10-01T09:00:00Z' });
    clock.set('2026-10-01T09:00:00Z');
    // The claim commits, then the process dies before dispatching.
    const claim = await claimDueRuns(stack.runtime.services, clock.now());
    expect(claim.runs).toHaveLength(1);
    const run = claim.runs[0].run;
    expect(run).toMatchObject({ status: 'queued', job_id: null, dispatched_at: null });
    // Another process does not dispatch the occurrence again: it is no longer due.
    expect((await dispatchDue(stack.runtime.services)).runs).toEqual([]);
    // Within the grace, recovery leaves it to the hold its claim is about to take.
    clock.advance(RECOVERY_GRACE_MS - 500);
    expect(await recoverStalledRuns(stack.runtime.services)).toEqual([]);
    // Nobody holds it: the next pass takes it, without waiting for it to grow old.
    clock.advance(1_000);
    const recovered = await recoverStalledRuns(stack.runtime.services);
    expect(recovered).toHaveLength(1);
    expect(recovered[0]).toMatchObject({ id: run.id, status: 'queued' });
    expect(recovered[0].job_id).toMatch(/^job_/);
    expect(await recoverStalledRuns(stack.runtime.services)).toEqual([]);
    const jobs = await stack.runtime.db.selectFrom('jobs').select('id').where('schedule_id', '=', s.id).execute();
    expect(jobs.map((j) => j.id)).toEqual([recovered[0].job_id]);
  });

  it('leaves a run to the live dispatcher holding it however long it takes, and takes it the moment the hold is gone', async () => {
    clock.set('2026-10-03T00:00:00Z');
    const ws = await workspace();
    const s = await createSchedule(ws, { timezone: 'UTC', starts_at: '2026-10-03T09:00:00Z' });
    clock.set('2026-10-03T09:00:00Z');
    const { run } = (await claimDueRuns(stack.runtime.services, clock.now())).runs[0];
    // A dispatcher holds the run (its transaction open, as while it dispatches).
    const hold = await holdRuns(stack.runtime.db, { ids: [run.id] });
    expect(hold.runs.map((r) => r.id)).toEqual([run.id]);
    // A second hold on the same run gets nothing.
    const second = await holdRuns(stack.runtime.db, { ids: [run.id] });
    expect(second.runs).toEqual([]);
    await second.release();
    clock.advance(HOUR);
    expect(await recoverStalledRuns(stack.runtime.services)).toEqual([]);
    // The dispatcher dies before dispatching: Postgres ends its transaction, and with it the hold.
    await hold.release();
    const recovered = await recoverStalledRuns(stack.runtime.services);
    expect(recovered.map((r) => r.id)).toEqual([run.id]);
    expect(recovered[0].job_id).toMatch(/^job_/);
    expect(await stack.runtime.db.selectFrom('jobs').select('id').where('schedule_id', '=', s.id).execute()).toHaveLength(1);
  });

  it('finds the job a dead dispatcher created before it could record it, instead of creating another', async () => {
    clock.set('2026-10-05T00:00:00Z');
    const ws = await workspace();
    const s = await createSchedule(ws, { timezone: 'UTC', starts_at: '2026-10-05T09:00:00Z', targets: ['spacex'] });
    clock.set('2026-10-05T09:00:00Z');
    const { run, schedule } = (await claimDueRuns(stack.runtime.services, clock.now())).runs[0];
    // The dispatcher created the job with the run's key, then died before writing the outcome.
    const tenant = await scheduleTenant(stack.runtime.db, schedule.workspace_id);
    const created = await createJob(
      stack.runtime.services,
      tenant,
      { platform: schedule.platform, operation: schedule.operation, target: 'spacex', limit: schedule.requested_limit, include_posts: 0 },
      { endpoint: SCHEDULE_RUN_ENDPOINT, idempotencyKey: run.id, scheduleId: s.id },
    );
    clock.advance(2 * MINUTE);
    const recovered = await recoverStalledRuns(stack.runtime.services);
    expect(recovered).toHaveLength(1);
    expect(recovered[0]).toMatchObject({ id: run.id, status: 'queued', job_id: created.job.id });
    const jobs = await stack.runtime.db.selectFrom('jobs').select('id').where('schedule_id', '=', s.id).execute();
    expect(jobs).toHaveLength(1);
  });
});
