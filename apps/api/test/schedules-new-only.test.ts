import { createJob, loadResult } from '@sdx/domain/testing';
import { startTestStack, type TestStack, waitForJob } from '@sdx/testing';

/**
 * Monitoring schedules with `delivery: new_only` (extensions.md 10): each occurrence's job
 * delivers and bills only the items no earlier occurrence of the schedule delivered for its
 * target. The sandbox's `sandbox_rolling_N` feed gains N items a second.
 */
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ withWorker: true });
});
afterAll(async () => {
  await stack.close();
});

const idsOf = (result: unknown) => (result as Array<{ id: string }>).map((item) => item.id);

async function schedule(auth: Record<string, string>, target: string, extra: Record<string, unknown> = {}) {
  const res = await stack.api.post('/v1/schedules', {
    headers: auth,
    body: {
      name: 'monitor',
      platform: 'tiktok',
      operation: 'search',
      targets: [target],
      limit: 100,
      frequency: 'daily',
      timezone: 'UTC',
      starts_at: '2030-01-01T00:00:00Z',
      delivery: 'new_only',
      ...extra,
    },
  });
  expect(res.status).toBe(201);
  return res.body as { id: string; delivery: string };
}

async function runNow(auth: Record<string, string>, scheduleId: string) {
  const res = await stack.api.post(`/v1/schedules/${scheduleId}/run`, { headers: auth });
  expect(res.status).toBe(202);
  const jobId = (res.body.runs?.[0]?.job_id ?? res.body.job_id) as string;
  expect(jobId).toMatch(/^job_/);
  return jobId;
}

describe('new_only schedules', () => {
  it('delivers everything the first time, then bills only the new items of a changing feed', async () => {
    const ws = await stack.workspace({ credits: 10_000 });
    const sch = await schedule(ws.auth, 'sandbox_rolling_10 news');
    expect(sch.delivery).toBe('new_only');

    const first = await waitForJob(stack, ws.auth, await runNow(ws.auth, sch.id), (j) => j.status === 'completed');
    expect(first).toMatchObject({ result_count: 100, billed_credits: 200 });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const second = await waitForJob(stack, ws.auth, await runNow(ws.auth, sch.id), (j) => j.status === 'completed');

    const firstIds = idsOf(first.result);
    const secondIds = idsOf(second.result);
    // At least 1.5 s at 10 items a second: 15 new items or more (fewer than 100 unless the
    // machine stalled for 10 s), none of them delivered before.
    expect(second.result_count).toBeGreaterThanOrEqual(15);
    expect(second.result_count).toBeLessThan(100);
    expect(secondIds).toHaveLength(second.result_count);
    expect(second.billed_credits).toBe(2 * second.result_count);
    expect(secondIds.filter((id) => firstIds.includes(id))).toEqual([]);
    const newestBefore = Math.max(...firstIds.map(Number));
    for (const id of secondIds) expect(Number(id)).toBeGreaterThan(newestBefore);

    // The reservation was the maximum; the unused part went back.
    const usage = (await stack.api.get('/v1/usage/current', { headers: ws.auth })).body;
    expect(usage).toMatchObject({ credits_used: 200 + 2 * second.result_count, credits_reserved: 0 });

    // The export holds what the job delivered, and nothing else.
    const csv = await stack.api.get(`/v1/jobs/${second.id}/export?format=csv`, { headers: ws.auth });
    expect(csv.status).toBe(200);
    expect(csv.text.trim().split('\n')).toHaveLength(second.result_count + 1);
  });

  it('marks nothing delivered for a cancelled occurrence', async () => {
    const ws = await stack.workspace({ credits: 10_000 });
    const sch = await schedule(ws.auth, 'sandbox_rolling_1 sandbox_slow_3000 cancelled');
    const cancelled = await runNow(ws.auth, sch.id);
    await waitForJob(stack, ws.auth, cancelled, (j) => j.status === 'running');
    expect((await stack.api.post(`/v1/jobs/${cancelled}/cancel`, { headers: ws.auth })).status).toBe(200);
    const next = await waitForJob(stack, ws.auth, await runNow(ws.auth, sch.id), (j) => j.status === 'completed');
    expect(next.result_count).toBe(100);
  });

  it('never lets two overlapping occurrences deliver the same item', async () => {
    const ws = await stack.workspace({ credits: 10_000 });
    const sch = await schedule(ws.auth, 'sandbox_rolling_2 sandbox_slow_500 overlap');
    const workspace = await stack.runtime.db
      .selectFrom('workspaces')
      .selectAll()
      .where('id', '=', ws.workspaceId)
      .executeTakeFirstOrThrow();
    const tenant = { workspace, keyId: null, role: null };
    const body = { platform: 'tiktok', operation: 'search', target: 'sandbox_rolling_2 sandbox_slow_500 overlap', limit: 100 };
    const options = { endpoint: 'schedule-run', scheduleId: sch.id, newOnly: true };
    const [a, b] = await Promise.all([
      createJob(stack.runtime.services, tenant, body, options),
      createJob(stack.runtime.services, tenant, body, options),
    ]);
    expect(a.job.id).not.toBe(b.job.id); // never deduplicated onto each other
    const done = await Promise.all([a, b].map((c) => waitForJob(stack, ws.auth, c.job.id, (j) => j.status === 'completed')));
    const [ra, rb] = await Promise.all(done.map((j) => loadResult(stack.runtime.services, { ...j, source_job_id: null } as never)));
    const both = [...idsOf(ra), ...idsOf(rb)];
    expect(new Set(both).size).toBe(both.length);
    expect(done[0]!.result_count + done[1]!.result_count).toBe(both.length);
    expect(both.length).toBeGreaterThanOrEqual(100);
  });

  it('is refused on single-result operations and echoed as all by default', async () => {
    const ws = await stack.workspace();
    const single = await stack.api.post('/v1/schedules', {
      headers: ws.auth,
      body: {
        name: 'x',
        operation: 'profile',
        targets: ['natgeo'],
        frequency: 'daily',
        timezone: 'UTC',
        starts_at: '2030-01-01T00:00:00Z',
        delivery: 'new_only',
      },
    });
    expect(single.status).toBe(422);
    expect(single.body.detail[0].loc).toEqual(['body', 'delivery']);
    const plain = await stack.api.post('/v1/schedules', {
      headers: ws.auth,
      body: { name: 'x', operation: 'posts', targets: ['natgeo'], frequency: 'daily', timezone: 'UTC', starts_at: '2030-01-01T00:00:00Z' },
    });
    expect(plain.body.delivery).toBe('all');
    const wrong = await stack.api.post('/v1/schedules', {
      headers: ws.auth,
      body: {
        name: 'x',
        operation: 'posts',
        targets: ['natgeo'],
        frequency: 'daily',
        timezone: 'UTC',
        starts_at: '2030-01-01T00:00:00Z',
        delivery: 'some',
      },
    });
    expect(wrong.status).toBe(422);
  });
});
