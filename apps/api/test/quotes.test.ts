import fc from 'fast-check';
import { ledgerTotals } from '@sdx/domain/testing';
import { countWorkspaceRows, startTestStack, type TestStack, waitForJob } from '@sdx/testing';

/**
 * POST /v1/quotes answers what the matching create call would reserve now, computed by the
 * admission planner itself, and writes nothing.
 */
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ withWorker: true, workerConcurrency: 16 });
});
afterAll(async () => {
  await stack.close();
});

async function reserved(auth: Record<string, string>): Promise<number> {
  return (await stack.api.get('/v1/usage/current', { headers: auth })).body.credits_reserved as number;
}

describe('POST /v1/quotes', () => {
  it('quotes a job and a batch at what their create calls then reserve, writing nothing', async () => {
    const ws = await stack.workspace({ credits: 100_000 });
    const jobBody = { platform: 'twitter', operation: 'followers', target: 'sandbox_slow_3000_quote', limit: 2500 };
    const quoted = await stack.api.post('/v1/quotes', { headers: ws.auth, body: jobBody });
    expect(quoted.status).toBe(200);
    expect(quoted.body).toMatchObject({
      platform: 'twitter',
      operation: 'followers',
      requested_limit: 2500,
      target_count: 1,
      cached_targets: 0,
      available_credits: 100_000,
      affordable: true,
      active_jobs: 0,
    });
    expect(await countWorkspaceRows(stack, 'jobs', ws.workspaceId)).toBe(0);
    expect(await countWorkspaceRows(stack, 'credit_ledger', ws.workspaceId)).toBe(1); // the plan allowance only
    const created = await stack.api.post('/v1/jobs', { headers: ws.auth, body: jobBody });
    expect(created.status).toBe(202);
    expect(await reserved(ws.auth)).toBe(quoted.body.max_credits);
    expect(quoted.body.max_credits).toBe(2 * 2500);

    const targets = Array.from({ length: 100 }, (_, i) => `batch_quote_${i}`);
    const batchBody = { platform: 'instagram', operation: 'profile', targets, include_posts: 3 };
    const ledgerReserved = async () => (await ledgerTotals(stack.runtime.db, ws.workspaceId)).reserved;
    const before = await ledgerReserved();
    const batchQuote = await stack.api.post('/v1/quotes', { headers: ws.auth, body: batchBody });
    expect(batchQuote.body).toMatchObject({ target_count: 100, affordable: true, active_jobs: 1 });
    const batch = await stack.api.post('/v1/batches', { headers: ws.auth, body: batchBody });
    expect(batch.status).toBe(202);
    expect((await ledgerReserved()) - before).toBe(batchQuote.body.max_credits);
    expect(batchQuote.body.max_credits).toBe(100 * (1 + 3 * 2));
  });

  it('quotes cached and deduplicated work at zero, and an unaffordable request as affordable: false', async () => {
    const ws = await stack.workspace({ credits: 3 });
    const done = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'profile', target: 'cached_one' } });
    await waitForJob(stack, ws.auth, done.body.id, (j) => j.status === 'completed');
    const cached = await stack.api.post('/v1/quotes', { headers: ws.auth, body: { operation: 'profile', target: 'cached_one' } });
    expect(cached.body).toMatchObject({ max_credits: 0, cached_targets: 1, affordable: true });
    const fresh = await stack.api.post('/v1/quotes', {
      headers: { ...ws.auth, 'Cache-Control': 'no-cache' },
      body: { operation: 'profile', target: 'cached_one' },
    });
    expect(fresh.body).toMatchObject({ max_credits: 1, cached_targets: 0 });

    const slow = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'profile', target: 'sandbox_slow_5000_twin' } });
    expect(slow.status).toBe(202);
    const twin = await stack.api.post('/v1/quotes', { headers: ws.auth, body: { operation: 'profile', target: 'sandbox_slow_5000_twin' } });
    expect(twin.body).toMatchObject({ max_credits: 0, cached_targets: 0, affordable: true, active_jobs: 1 });

    const tooMuch = await stack.api.post('/v1/quotes', { headers: ws.auth, body: { operation: 'posts', target: 'natgeo', limit: 50 } });
    expect(tooMuch.status).toBe(200);
    expect(tooMuch.body).toMatchObject({ affordable: false, available_credits: 1 });
    expect(tooMuch.body.max_credits).toBeGreaterThan(1);
    const refused = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'posts', target: 'natgeo', limit: 50 } });
    expect(refused.status).toBe(402);
    expect(refused.body.detail.required).toBe(tooMuch.body.max_credits);
  });

  it("answers the create calls' validation errors", async () => {
    const ws = await stack.workspace();
    const both = await stack.api.post('/v1/quotes', { headers: ws.auth, body: { operation: 'profile', target: 'a', targets: ['b'] } });
    expect(both.status).toBe(422);
    expect(both.body.detail[0].loc).toEqual(['body', 'targets']);
    const neither = await stack.api.post('/v1/quotes', { headers: ws.auth, body: { operation: 'profile' } });
    expect(neither.status).toBe(422);
    expect(neither.body.detail[0]).toMatchObject({ loc: ['body', 'target'], type: 'missing' });
    const platform = await stack.api.post('/v1/quotes', {
      headers: ws.auth,
      body: { platform: 'myspace', operation: 'profile', target: 'x' },
    });
    expect(platform.status).toBe(422);
    expect(platform.body.detail.error).toBe('unsupported_operation');
    const duplicates = await stack.api.post('/v1/quotes', { headers: ws.auth, body: { operation: 'profile', targets: ['Nasa', 'nasa'] } });
    expect(duplicates.status).toBe(422);
    expect(duplicates.body.detail.error).toBe('duplicate_batch_target');
    const target = await stack.api.post('/v1/quotes', {
      headers: ws.auth,
      body: { platform: 'youtube', operation: 'video', target: 'not a video id!' },
    });
    expect(target.status).toBe(422);
    expect(target.body.detail.error).toBe('invalid_target');
    const noKey = await stack.api.post('/v1/quotes', { body: { operation: 'profile', target: 'x' } });
    expect(noKey.status).toBe(401);
  });

  it('always equals what the create call that follows reserves, for random bodies and workspace states', async () => {
    const operations = [
      { platform: 'instagram', operation: 'profile', maxLimit: 1, posts: true },
      { platform: 'instagram', operation: 'posts', maxLimit: 100, posts: false },
      { platform: 'twitter', operation: 'followers', maxLimit: 200, posts: false },
      { platform: 'tiktok', operation: 'profile', maxLimit: 1, posts: true },
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          op: fc.constantFrom(...operations),
          limit: fc.integer({ min: 1, max: 200 }),
          includePosts: fc.integer({ min: 0, max: 20 }),
          credits: fc.integer({ min: 0, max: 400 }),
          maxActiveJobs: fc.integer({ min: 1, max: 3 }),
          batch: fc.integer({ min: 0, max: 4 }),
          twin: fc.constantFrom('none', 'active', 'done'),
        }),
        async ({ op, limit, includePosts, credits, maxActiveJobs, batch, twin }) => {
          const ws = await stack.workspace({ credits: credits + 2, maxActiveJobs });
          const base = {
            platform: op.platform,
            operation: op.operation,
            limit: Math.min(limit, op.maxLimit),
            include_posts: op.posts ? includePosts : 0,
          };
          const target = twin === 'active' ? 'sandbox_slow_8000_prop' : 'prop_target';
          if (twin !== 'none') {
            const first = await stack.api.post('/v1/jobs', {
              headers: ws.auth,
              body: { platform: 'instagram', operation: 'profile', target },
            });
            if (twin === 'done') await waitForJob(stack, ws.auth, first.body.id, (j) => j.status === 'completed');
          }
          const body = batch > 0 ? { ...base, targets: Array.from({ length: batch }, (_, i) => `${target}_${i}`) } : { ...base, target };
          const path = batch > 0 ? '/v1/batches' : '/v1/jobs';
          // Reserved by the create call: its ledger entries (they stay when its jobs settle at once).
          const reservedSoFar = async () => (await ledgerTotals(stack.runtime.db, ws.workspaceId)).reserved;
          const before = await reservedSoFar();
          const quoted = await stack.api.post('/v1/quotes', { headers: ws.auth, body });
          expect(quoted.status).toBe(200);
          const created = await stack.api.post(path, { headers: ws.auth, body });
          const after = await reservedSoFar();
          if (quoted.body.affordable) {
            expect(created.status).toBe(202);
            expect(after - before).toBe(quoted.body.max_credits);
          } else {
            expect([402, 429]).toContain(created.status);
            expect(after).toBe(before);
          }
          // Slow work of this run must not hold the worker's slots for the next runs.
          const active = await stack.runtime.db
            .selectFrom('jobs')
            .select('id')
            .where('workspace_id', '=', ws.workspaceId)
            .where('status', 'in', ['queued', 'running'])
            .execute();
          await Promise.all(active.map((job) => stack.api.post(`/v1/jobs/${job.id}/cancel`, { headers: ws.auth })));
        },
      ),
      { numRuns: 40 },
    );
  });
});
