import { eventually, startTestStack, type TestStack } from '@sdx/testing';

/**
 * A 25,000-item job (twitter followers): per-page progress, exact billing, one deduplicated
 * result, and small jobs that stay fast to read while it runs. SANDBOX_LATENCY_MS=50 spreads
 * its 25 pages over time so progress is observable.
 */

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ withWorker: true, env: { SANDBOX_LATENCY_MS: '50' } });
});
afterAll(async () => {
  await stack.close();
});

it('twitter followers limit 25000 completes page by page, billed 50000, while small jobs stay fast', async () => {
  const ws = await stack.workspace({ credits: 60_000 });
  const small = await stack.api.post('/v1/extract', {
    headers: ws.auth,
    body: { platform: 'twitter', operation: 'profile', target: 'jack' },
  });
  expect(small.status).toBe(200);

  const created = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'twitter', operation: 'followers', target: 'elonmusk', limit: 25_000 },
  });
  expect(created.status).toBe(202);
  expect(created.body.requested_limit).toBe(25_000);

  const seen = new Set<number>();
  const smallLatencies: number[] = [];
  const done = await eventually(
    async () => {
      const r = await stack.api.get(`/v1/jobs/${created.body.id}`, { headers: ws.auth });
      if (r.body.status === 'running') seen.add(r.body.progress_current);
      const t0 = Date.now();
      const s = await stack.api.get(`/v1/jobs/${small.body.id}`, { headers: ws.auth });
      smallLatencies.push(Date.now() - t0);
      expect(s.body.status).toBe('completed');
      return r.body.status === 'completed' || r.body.status === 'failed' ? r : undefined;
    },
    60_000,
    20,
  );

  const intermediate = [...seen].filter((n) => n > 0 && n < 25_000);
  expect(intermediate.length).toBeGreaterThan(0);
  // Progress moves in whole pages of followers.
  for (const n of intermediate) expect(n % 1000).toBe(0);
  // Reads of the small job never wait for the large one: nine in ten answer at once, and none
  // waits seconds (a single read can meet a disk flush or a collection of the shared machine).
  const sorted = [...smallLatencies].sort((a, b) => a - b);
  expect(sorted[Math.floor(sorted.length * 0.9)]).toBeLessThan(250);
  expect(sorted[sorted.length - 1]).toBeLessThan(2000);

  expect(done.body).toMatchObject({
    status: 'completed',
    result_count: 25_000,
    progress_current: 25_000,
    billed_units: 25_000,
    billed_credits: 50_000,
    attempts: 1,
  });
  const items = done.body.result as Array<{ id: string; kind: string; platform: string }>;
  expect(items).toHaveLength(25_000);
  expect(new Set(items.map((i) => i.id)).size).toBe(25_000);
  expect(items[0]).toMatchObject({ platform: 'twitter' });

  const usage = await stack.api.get('/v1/usage/current', { headers: ws.auth });
  expect(usage.body).toMatchObject({ credits_used: 50_001, credits_reserved: 0, credits_remaining: 60_000 - 50_001 });

  const pages = await stack.runtime.db
    .selectFrom('job_result_pages')
    .select(['page_no', 'item_count'])
    .where('job_id', '=', created.body.id)
    .orderBy('page_no')
    .execute();
  expect(pages).toHaveLength(25);
  expect(pages.every((p) => p.item_count === 1000)).toBe(true);
}, 90_000);
