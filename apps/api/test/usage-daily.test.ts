import { startTestStack, type TestStack, waitForJob } from '@sdx/testing';

/** GET /v1/usage/daily: per UTC day from the ledger, empty days as zeros, agreeing with the current usage. */
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ withWorker: true });
});
afterAll(async () => {
  await stack.close();
});

describe('GET /v1/usage/daily', () => {
  it("shows today's spend, releases and jobs, with 29 empty days before it", async () => {
    const ws = await stack.workspace({ credits: 10_000 });
    const ok = await stack.api.post('/v1/jobs', {
      headers: ws.auth,
      body: { platform: 'twitter', operation: 'followers', target: 'sandbox_count_40_daily', limit: 100 },
    });
    const failed = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'profile', target: 'sandbox_not_found' } });
    await waitForJob(stack, ws.auth, ok.body.id, (j) => j.status === 'completed');
    await waitForJob(stack, ws.auth, failed.body.id, (j) => j.status === 'failed');

    const res = await stack.api.get('/v1/usage/daily', { headers: ws.auth });
    expect(res.status).toBe(200);
    const days = res.body as Array<Record<string, number | string>>;
    expect(days).toHaveLength(30);
    const today = new Date().toISOString().slice(0, 10);
    expect(days.at(-1)).toEqual({
      date: today,
      credits_used: 80,
      credits_released: 200 - 80 + 1,
      results: 40,
      jobs_completed: 1,
      jobs_failed: 1,
    });
    for (const day of days.slice(0, -1))
      expect(day).toMatchObject({ credits_used: 0, credits_released: 0, results: 0, jobs_completed: 0, jobs_failed: 0 });
    const dates = days.map((d) => d.date as string);
    expect([...dates].sort()).toEqual(dates);
    expect(new Date(`${dates[0]}T00:00:00Z`).getTime()).toBe(new Date(`${today}T00:00:00Z`).getTime() - 29 * 86_400_000);

    // The days of the current period add up to the current usage.
    const current = (await stack.api.get('/v1/usage/current', { headers: ws.auth })).body;
    const period = days.filter((d) => (d.date as string) >= current.period_start);
    expect(period.reduce((sum, d) => sum + (d.credits_used as number), 0)).toBe(current.credits_used);
    expect(period.reduce((sum, d) => sum + (d.results as number), 0)).toBe(current.units_used);
  });

  it('takes days from 1 to 90', async () => {
    const ws = await stack.workspace();
    expect((await stack.api.get('/v1/usage/daily?days=1', { headers: ws.auth })).body).toHaveLength(1);
    expect((await stack.api.get('/v1/usage/daily?days=90', { headers: ws.auth })).body).toHaveLength(90);
    for (const bad of ['0', '91', 'x', '1.5']) {
      const res = await stack.api.get(`/v1/usage/daily?days=${bad}`, { headers: ws.auth });
      expect(res.status).toBe(422);
      expect(res.body.detail[0].loc).toEqual(['query', 'days']);
    }
    expect((await stack.api.get('/v1/usage/daily')).status).toBe(401);
  });
});
