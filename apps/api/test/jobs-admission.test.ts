import { sql } from 'kysely';
import { startTestStack, type SeededWorkspace, type TestStack, usageChecked } from '@sdx/testing';

/**
 * Admission of jobs through HTTP with no worker running: request checks and their order,
 * reservations, the usage invariant, concurrent admissions, tenant isolation, listing and
 * cancellation of queued jobs. Jobs stay queued here, so every state seen is the admission's.
 */

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack.close();
});

const usage = (ws: SeededWorkspace) => usageChecked(stack, ws);

async function jobRows(workspaceId: string) {
  return stack.runtime.db.selectFrom('jobs').selectAll().where('workspace_id', '=', workspaceId).execute();
}

async function reservation(jobId: string) {
  return stack.runtime.db.selectFrom('credit_reservations').selectAll().where('job_id', '=', jobId).executeTakeFirst();
}

describe('POST /v1/jobs admission', () => {
  it('answers 202 queued with every field, reserves the maximum cost and fills requested_limit', async () => {
    const ws = await stack.workspace({ credits: 1000 });
    const res = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'posts', target: 'natgeo', limit: 30 } });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      platform: 'instagram',
      operation: 'posts',
      target: 'natgeo',
      requested_limit: 30,
      include_posts: 0,
      status: 'queued',
      attempts: 0,
      progress_stage: 'queued',
      progress_current: 0,
      result_count: null,
      billed_units: 0,
      credit_rate: 2,
      results_per_credit: 1,
      billed_credits: 0,
      result: null,
      error: null,
      cancel_requested_at: null,
      started_at: null,
      finished_at: null,
      cached: false,
      deduplicated: false,
      idempotent_replay: false,
    });
    expect(res.body.id).toMatch(/^job_/);
    expect(res.body.max_attempts).toBe(stack.config.jobMaxAttempts);
    const u = await usage(ws);
    expect(u).toMatchObject({ credits_used: 0, credits_reserved: 60, credits_remaining: 940 });
    expect((await reservation(res.body.id))?.status).toBe('held');
  });

  it('reports the effective limit: min(limit, max_results)', async () => {
    const ws = await stack.workspace({ credits: 100 });
    const res = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'profile', target: 'natgeo', limit: 50 } });
    expect(res.status).toBe(202);
    expect(res.body.requested_limit).toBe(1);
    expect((await usage(ws)).credits_reserved).toBe(1);
  });

  it('reserves a profile bundle as the profile plus include_posts posts at the posts rate', async () => {
    const ws = await stack.workspace({ credits: 100 });
    const res = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'profile', target: 'natgeo', include_posts: 5 } });
    expect(res.status).toBe(202);
    expect(res.body.include_posts).toBe(5);
    expect((await usage(ws)).credits_reserved).toBe(1 + 5 * 2);
  });

  it('reserves flat pricing as its base credits', async () => {
    const ws = await stack.workspace({ credits: 100 });
    const res = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'highlights', target: 'natgeo', limit: 50 } });
    expect(res.status).toBe(202);
    expect((await usage(ws)).credits_reserved).toBe(10);
  });

  it('accepts large limits on operations whose maximum is above 200', async () => {
    const ws = await stack.workspace({ credits: 60_000 });
    const res = await stack.api.post('/v1/jobs', {
      headers: ws.auth,
      body: { platform: 'twitter', operation: 'followers', target: 'jack', limit: 25_000 },
    });
    expect(res.status).toBe(202);
    expect(res.body.requested_limit).toBe(25_000);
    expect((await usage(ws)).credits_reserved).toBe(50_000);
  });
});

describe('request checks write nothing', () => {
  async function rejected(ws: SeededWorkspace, body: Record<string, unknown>, status: number) {
    const res = await stack.api.post('/v1/jobs', { headers: ws.auth, body });
    expect(res.status).toBe(status);
    expect(await jobRows(ws.workspaceId)).toHaveLength(0);
    expect((await usage(ws)).credits_reserved).toBe(0);
    return res;
  }

  it('limit above max(200, max_results) is a 422 validation error on limit', async () => {
    const ws = await stack.workspace({ credits: 1000 });
    const res = await rejected(ws, { operation: 'posts', target: 'natgeo', limit: 201 }, 422);
    expect(res.body.detail).toEqual(expect.arrayContaining([expect.objectContaining({ loc: ['body', 'limit'] })]));
    const big = await rejected(ws, { platform: 'twitter', operation: 'followers', target: 'jack', limit: 25_001 }, 422);
    expect(big.body.detail).toEqual(expect.arrayContaining([expect.objectContaining({ loc: ['body', 'limit'] })]));
  });

  it('limit above the workspace max_result_limit is 400 invalid_request', async () => {
    const ws = await stack.workspace({ credits: 1000, maxResultLimit: 20 });
    const res = await rejected(ws, { operation: 'posts', target: 'natgeo', limit: 21 }, 400);
    expect(res.body.detail.error).toBe('invalid_request');
    const ok = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'posts', target: 'natgeo', limit: 20 } });
    expect(ok.status).toBe(202);
  });

  it('include_posts on a non-profile operation is 400 invalid_request', async () => {
    const ws = await stack.workspace({ credits: 1000 });
    const res = await rejected(ws, { operation: 'posts', target: 'natgeo', include_posts: 3 }, 400);
    expect(res.body.detail.error).toBe('invalid_request');
  });

  it('an unsupported (platform, operation) is 422 unsupported_operation', async () => {
    const ws = await stack.workspace({ credits: 1000 });
    const res = await rejected(ws, { platform: 'youtube', operation: 'followers', target: 'natgeo' }, 422);
    expect(res.body.detail).toMatchObject({ error: 'unsupported_operation' });
    const unknown = await rejected(ws, { platform: 'myspace', operation: 'profile', target: 'natgeo' }, 422);
    expect(unknown.body.detail).toMatchObject({ error: 'unsupported_operation' });
  });

  it("says in unsupported_operation what to send instead: the known platforms (X is `twitter`), or the platform's own operations", async () => {
    const ws = await stack.workspace({ credits: 1000 });
    const x = await rejected(ws, { platform: 'x', operation: 'followers', target: 'nasa' }, 422);
    expect(x.body.detail).toEqual({
      error: 'unsupported_operation',
      message:
        'Unknown platform "x". The platforms are `instagram`, `tiktok`, `youtube`, `twitter` and `facebook`; X (formerly Twitter) is `twitter`.',
      platform: 'x',
      operation: 'followers',
    });
    const operation = await rejected(ws, { platform: 'youtube', operation: 'followers', target: 'natgeo' }, 422);
    const platforms = (await stack.api.get('/v1/platforms')).body as Array<{ platform: string; operations: Array<{ operation: string }> }>;
    const own = platforms.find((p) => p.platform === 'youtube')!.operations.map((o) => `\`${o.operation}\``);
    expect(own.length).toBeGreaterThan(1);
    expect(operation.body.detail.message).toBe(
      `Platform youtube has no operation "followers". Its operations: ${own.slice(0, -1).join(', ')} and ${own.at(-1)} (GET /v1/platforms lists them with their limits and prices).`,
    );
  });

  it('an invalid target is 422 invalid_target', async () => {
    const ws = await stack.workspace({ credits: 1000 });
    const bad = await rejected(ws, { platform: 'twitter', operation: 'profile', target: 'bad user!' }, 422);
    expect(bad.body.detail).toMatchObject({ error: 'invalid_target' });
    const foreignUrl = await rejected(ws, { operation: 'post', target: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ' }, 422);
    expect(foreignUrl.body.detail).toMatchObject({ error: 'invalid_target' });
    const country = await rejected(ws, { platform: 'tiktok', operation: 'trending', target: 'USA' }, 422);
    expect(country.body.detail).toMatchObject({ error: 'invalid_target' });
  });

  it('checks the catalog before the target and the target before the limit', async () => {
    const ws = await stack.workspace({ credits: 1000, maxResultLimit: 5 });
    const unsupported = await rejected(ws, { platform: 'youtube', operation: 'followers', target: 'bad user!', limit: 100 }, 422);
    expect(unsupported.body.detail.error).toBe('unsupported_operation');
    const target = await rejected(ws, { platform: 'twitter', operation: 'posts', target: 'bad user!', limit: 100 }, 422);
    expect(target.body.detail.error).toBe('invalid_target');
  });

  it('unknown body keys are a 422 validation error', async () => {
    const ws = await stack.workspace({ credits: 1000 });
    const res = await rejected(ws, { operation: 'posts', target: 'natgeo', colour: 'red' }, 422);
    expect(res.body.detail).toEqual(
      expect.arrayContaining([expect.objectContaining({ loc: ['body', 'colour'], type: 'extra_forbidden' })]),
    );
  });

  it('a reservation that does not fit is 402 insufficient_credits with available, reserved and required', async () => {
    const ws = await stack.workspace({ credits: 30 });
    const first = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'posts', target: 'natgeo', limit: 10 } });
    expect(first.status).toBe(202);
    const res = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'posts', target: 'nasa', limit: 6 } });
    expect(res.status).toBe(402);
    expect(res.body.detail).toMatchObject({ error: 'insufficient_credits', available: 10, reserved: 20, required: 12 });
    expect(await jobRows(ws.workspaceId)).toHaveLength(1);
    expect(await usage(ws)).toMatchObject({ credits_reserved: 20, credits_remaining: 10 });
  });
});

describe('concurrent admissions', () => {
  it('20 concurrent submissions against credits for 5 jobs: exactly 5 accepted, never a negative balance', async () => {
    const ws = await stack.workspace({ credits: 100 });
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'posts', target: `account_${i}`, limit: 10 } }),
      ),
    );
    const accepted = responses.filter((r) => r.status === 202);
    const refused = responses.filter((r) => r.status === 402);
    expect(accepted).toHaveLength(5);
    expect(refused).toHaveLength(15);
    for (const r of refused) {
      expect(r.body.detail).toMatchObject({ error: 'insufficient_credits', available: 0, reserved: 100, required: 20 });
    }
    expect(new Set(accepted.map((r) => r.body.id)).size).toBe(5);
    expect(await jobRows(ws.workspaceId)).toHaveLength(5);
    expect(await usage(ws)).toMatchObject({ credits_used: 0, credits_reserved: 100, credits_remaining: 0 });
    const ledger = await stack.runtime.db
      .selectFrom('credit_ledger')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('workspace_id', '=', ws.workspaceId)
      .where('entry_type', '=', 'reserve')
      .executeTakeFirstOrThrow();
    expect(ledger.n).toBe(5);
  });
});

describe('cancel of queued jobs (no worker)', () => {
  it('cancels at once and releases the reservation; repeating it is harmless', async () => {
    const ws = await stack.workspace({ credits: 100 });
    const created = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'posts', target: 'natgeo', limit: 10 } });
    expect(created.status).toBe(202);
    expect((await usage(ws)).credits_reserved).toBe(20);

    const res = await stack.api.post(`/v1/jobs/${created.body.id}/cancel`, { headers: ws.auth });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: created.body.id,
      status: 'cancelled',
      progress_stage: 'cancelled',
      billed_credits: 0,
      result: null,
    });
    expect(res.body.cancel_requested_at).not.toBeNull();
    expect(res.body.finished_at).not.toBeNull();
    expect(await usage(ws)).toMatchObject({ credits_used: 0, credits_reserved: 0, credits_remaining: 100 });
    expect((await reservation(created.body.id))?.status).toBe('released');

    const again = await stack.api.post(`/v1/jobs/${created.body.id}/cancel`, { headers: ws.auth });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({
      status: 'cancelled',
      cancel_requested_at: res.body.cancel_requested_at,
      finished_at: res.body.finished_at,
    });
    expect(await usage(ws)).toMatchObject({ credits_used: 0, credits_reserved: 0, credits_remaining: 100 });
    const releases = await stack.runtime.db
      .selectFrom('credit_ledger')
      .select('id')
      .where('job_id', '=', created.body.id)
      .where('entry_type', '=', 'release')
      .execute();
    expect(releases).toHaveLength(1);

    const fetched = await stack.api.get(`/v1/jobs/${created.body.id}`, { headers: ws.auth });
    expect(fetched.body).toMatchObject({ status: 'cancelled', billed_credits: 0, result: null });
  });

  it('a cancelled job frees its credits for new work', async () => {
    const ws = await stack.workspace({ credits: 20 });
    const first = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'posts', target: 'natgeo', limit: 10 } });
    expect(first.status).toBe(202);
    const blocked = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'posts', target: 'nasa', limit: 10 } });
    expect(blocked.status).toBe(402);
    await stack.api.post(`/v1/jobs/${first.body.id}/cancel`, { headers: ws.auth });
    const second = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'posts', target: 'nasa', limit: 10 } });
    expect(second.status).toBe(202);
  });
});

describe('tenant isolation', () => {
  it("another workspace's job is 404 job_not_found on GET and cancel, and is left untouched", async () => {
    const owner = await stack.workspace({ credits: 100 });
    const other = await stack.workspace({ credits: 100 });
    const created = await stack.api.post('/v1/jobs', { headers: owner.auth, body: { operation: 'posts', target: 'natgeo', limit: 10 } });
    expect(created.status).toBe(202);

    const get = await stack.api.get(`/v1/jobs/${created.body.id}`, { headers: other.auth });
    expect(get.status).toBe(404);
    expect(get.body.detail).toMatchObject({ error: 'job_not_found' });
    const cancel = await stack.api.post(`/v1/jobs/${created.body.id}/cancel`, { headers: other.auth });
    expect(cancel.status).toBe(404);
    expect(cancel.body.detail).toMatchObject({ error: 'job_not_found' });

    const list = await stack.api.get('/v1/jobs', { headers: other.auth });
    expect(list.body).toEqual([]);
    const mine = await stack.api.get(`/v1/jobs/${created.body.id}`, { headers: owner.auth });
    expect(mine.body.status).toBe('queued');
    expect((await usage(owner)).credits_reserved).toBe(20);
  });

  it('an unknown job ID is 404 job_not_found', async () => {
    const ws = await stack.workspace({ credits: 100 });
    const res = await stack.api.get('/v1/jobs/job_00000000000000000000000000', { headers: ws.auth });
    expect(res.status).toBe(404);
    expect(res.body.detail).toMatchObject({ error: 'job_not_found' });
  });
});

describe('GET /v1/jobs', () => {
  it('lists the latest jobs first and honours limit', async () => {
    const ws = await stack.workspace({ credits: 1000 });
    const ids: string[] = [];
    for (const target of ['alpha', 'bravo', 'charlie', 'delta']) {
      const res = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'profile', target } });
      expect(res.status).toBe(202);
      ids.push(res.body.id);
    }
    const all = await stack.api.get('/v1/jobs', { headers: ws.auth });
    expect(all.status).toBe(200);
    expect(all.body.map((j: { id: string }) => j.id)).toEqual([...ids].reverse());
    const two = await stack.api.get('/v1/jobs', { headers: ws.auth, query: { limit: 2 } });
    expect(two.body.map((j: { id: string }) => j.id)).toEqual([ids[3], ids[2]]);
    const bad = await stack.api.get('/v1/jobs', { headers: ws.auth, query: { limit: 101 } });
    expect(bad.status).toBe(422);
  });
});
