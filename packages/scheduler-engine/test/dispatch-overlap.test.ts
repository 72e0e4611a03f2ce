import { dispatchDue } from '@sdx/scheduler-engine';
import { eventually, startTestStack, type TestStack } from '@sdx/testing';

/**
 * overlap_policy skip with real work: a worker runs the previous occurrence's slow job while
 * the next occurrence comes due. The claim is told the time of the later occurrences; the job
 * itself runs on the real clock.
 */
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ withWorker: true });
});
afterAll(async () => {
  await stack.close();
});

const DAY = 86_400_000;

it('skips the next occurrence while the previous job is running, and dispatches once it has finished', async () => {
  const ws = await stack.workspace({ credits: 100, rateLimitPerMinute: 100_000 });
  const startsAt = new Date(Math.ceil((Date.now() + 1000) / 1000) * 1000);
  const created = await stack.api.post('/v1/schedules', {
    headers: ws.auth,
    body: {
      name: 'slow',
      operation: 'profile',
      targets: ['sandbox_slow_2500'],
      frequency: 'daily',
      timezone: 'UTC',
      starts_at: startsAt.toISOString(),
    },
  });
  expect(created.status).toBe(201);
  const scheduleId = created.body.id as string;
  await new Promise((resolve) => setTimeout(resolve, startsAt.getTime() - Date.now() + 20));

  const first = (await dispatchDue(stack.runtime.services)).runs.find((r) => r.schedule_id === scheduleId)!;
  expect(first.status).toBe('queued');
  await eventually(async () => {
    const job = await stack.api.get(`/v1/jobs/${first.job_id}`, { headers: ws.auth });
    return job.body.status === 'running';
  }, 10_000);

  const second = (await dispatchDue(stack.runtime.services, { now: new Date(startsAt.getTime() + DAY) })).runs.find(
    (r) => r.schedule_id === scheduleId,
  )!;
  expect(second).toMatchObject({ status: 'skipped_overlap', job_id: null, batch_id: null, dispatched_at: null });

  await eventually(async () => {
    const job = await stack.api.get(`/v1/jobs/${first.job_id}`, { headers: ws.auth });
    return job.body.status === 'completed';
  }, 15_000);
  const third = (await dispatchDue(stack.runtime.services, { now: new Date(startsAt.getTime() + 2 * DAY) })).runs.find(
    (r) => r.schedule_id === scheduleId,
  )!;
  expect(third.status).toBe('queued');
  expect(third.job_id).not.toBeNull();
  expect(third.job_id).not.toBe(first.job_id);

  const view = await stack.api.get(`/v1/schedules/${scheduleId}`, { headers: ws.auth });
  expect(view.body.runs.map((r: { status: string }) => r.status)).toEqual(['queued', 'skipped_overlap', 'queued']);
});
