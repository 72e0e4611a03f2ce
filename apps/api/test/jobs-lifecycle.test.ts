import { heldSandbox, startTestStack, type SeededWorkspace, type TestStack, waitForJob, usageChecked, type LooseJson } from '@sdx/testing';

/**
 * The job lifecycle of api-v1.md 3 through HTTP with a real worker: completion and billing
 * (per-result, flat, bundle, partial deliveries), terminal failures, cooperative cancellation
 * of running jobs, and the usage invariant before, during and after jobs.
 */

// Slow pages wait while a test holds them: what it asserts of a running job happens while it runs.
const sandbox = heldSandbox();
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ withWorker: true, providers: [sandbox.provider] });
});
afterAll(async () => {
  await stack.close();
});

const usage = (ws: SeededWorkspace) => usageChecked(stack, ws);

async function submit(ws: SeededWorkspace, body: Record<string, unknown>) {
  const res = await stack.api.post('/v1/jobs', { headers: ws.auth, body });
  expect(res.status).toBe(202);
  return res.body as { id: string };
}

const waitFor = (ws: SeededWorkspace, jobId: string, accept: (job: LooseJson) => boolean, timeoutMs?: number) =>
  waitForJob(stack, ws.auth, jobId, accept, timeoutMs);

const terminal = (job: { status: string }) => ['completed', 'failed', 'cancelled'].includes(job.status);

async function reservationStatus(jobId: string) {
  const row = await stack.runtime.db.selectFrom('credit_reservations').select('status').where('job_id', '=', jobId).executeTakeFirst();
  return row?.status;
}

describe('queued → running → completed', () => {
  it('runs, checkpoints and completes with per-result billing', async () => {
    const ws = await stack.workspace({ credits: 1000 });
    const letGo = sandbox.hold();
    const created = await submit(ws, { operation: 'posts', target: 'natgeo_sandbox_slow_300', limit: 40 });
    const running = await waitFor(ws, created.id, (j) => j.status === 'running');
    expect(running.attempts).toBe(1);
    expect(running.heartbeat_at).not.toBeNull();
    expect(running.started_at).not.toBeNull();
    expect(running.result).toBeNull();
    expect(await usage(ws)).toMatchObject({ credits_reserved: 80, credits_used: 0 });

    letGo();
    const done = await waitFor(ws, created.id, terminal);
    expect(done).toMatchObject({
      status: 'completed',
      progress_stage: 'completed',
      attempts: 1,
      result_count: 40,
      progress_current: 40,
      billed_units: 40,
      credit_rate: 2,
      billed_credits: 80,
      error: null,
      next_attempt_at: null,
    });
    expect(done.finished_at).not.toBeNull();
    expect(Array.isArray(done.result)).toBe(true);
    expect(done.result).toHaveLength(40);
    for (const item of done.result) {
      expect(item).toMatchObject({ platform: 'instagram' });
      expect(item).toHaveProperty('kind');
      expect(item).toHaveProperty('username');
      expect(item).toHaveProperty('caption');
    }
    expect(new Set(done.result.map((i: { id: string }) => i.id)).size).toBe(40);
    expect(await usage(ws)).toMatchObject({ credits_used: 80, credits_reserved: 0, credits_remaining: 920 });
    expect(await reservationStatus(created.id)).toBe('settled');
  });

  it('the same target always gives the same data', async () => {
    const a = await stack.workspace({ credits: 100 });
    const b = await stack.workspace({ credits: 100 });
    const ja = await submit(a, { operation: 'posts', target: 'nasa', limit: 5 });
    const jb = await submit(b, { operation: 'posts', target: 'nasa', limit: 5 });
    const da = await waitFor(a, ja.id, terminal);
    const db = await waitFor(b, jb.id, terminal);
    expect(da.result).toEqual(db.result);
  });

  it('bills sandbox_count_N as min(N, limit) delivered results', async () => {
    const ws = await stack.workspace({ credits: 1000 });
    const few = await submit(ws, { operation: 'posts', target: 'acct_sandbox_count_7', limit: 50 });
    const many = await submit(ws, { operation: 'posts', target: 'other_sandbox_count_70', limit: 20 });
    const f = await waitFor(ws, few.id, terminal);
    const m = await waitFor(ws, many.id, terminal);
    expect(f).toMatchObject({ status: 'completed', result_count: 7, billed_units: 7, billed_credits: 14, progress_current: 7 });
    expect(f.result).toHaveLength(7);
    expect(m).toMatchObject({ status: 'completed', result_count: 20, billed_credits: 40 });
    expect(await usage(ws)).toMatchObject({ credits_used: 54, credits_reserved: 0, credits_remaining: 946 });
  });

  it('bills flat pricing once when non-empty and nothing when empty', async () => {
    const ws = await stack.workspace({ credits: 100 });
    const full = await submit(ws, { operation: 'highlights', target: 'natgeo', limit: 20 });
    const empty = await submit(ws, { operation: 'highlights', target: 'natgeo_sandbox_empty', limit: 20 });
    const f = await waitFor(ws, full.id, terminal);
    const e = await waitFor(ws, empty.id, terminal);
    expect(f).toMatchObject({ status: 'completed', result_count: 20, billed_credits: 10 });
    expect(e).toMatchObject({ status: 'completed', result_count: 0, billed_credits: 0, progress_current: 0 });
    expect(e.result).toEqual([]);
    expect(await usage(ws)).toMatchObject({ credits_used: 10, credits_reserved: 0, credits_remaining: 90 });
  });

  it('bills an empty per-result job nothing', async () => {
    const ws = await stack.workspace({ credits: 100 });
    const job = await submit(ws, { operation: 'comments', target: 'CxYz_sandbox_empty', limit: 20 });
    const done = await waitFor(ws, job.id, terminal);
    expect(done).toMatchObject({ status: 'completed', result_count: 0, billed_credits: 0, billed_units: 0 });
    expect(await usage(ws)).toMatchObject({ credits_used: 0, credits_reserved: 0, credits_remaining: 100 });
  });

  it('a profile bundle returns {profile, posts} billed as the profile plus posts at the posts rate', async () => {
    const ws = await stack.workspace({ credits: 100 });
    const job = await submit(ws, { operation: 'profile', target: 'natgeo', include_posts: 6 });
    const done = await waitFor(ws, job.id, terminal);
    expect(done).toMatchObject({ status: 'completed', include_posts: 6, result_count: 7, billed_credits: 1 + 6 * 2 });
    expect(Object.keys(done.result).sort()).toEqual(['posts', 'profile']);
    expect(done.result.profile).toMatchObject({ kind: 'profile', platform: 'instagram' });
    expect(done.result.posts).toHaveLength(6);
    expect(await usage(ws)).toMatchObject({ credits_used: 13, credits_reserved: 0 });
  });

  it('a bundle that delivers fewer posts settles on what was delivered', async () => {
    const ws = await stack.workspace({ credits: 100 });
    const job = await submit(ws, { operation: 'profile', target: 'natgeo_sandbox_count_2_sandbox_slow_300', include_posts: 10 });
    expect((await usage(ws)).credits_reserved).toBe(21);
    const done = await waitFor(ws, job.id, terminal);
    expect(done).toMatchObject({ status: 'completed', result_count: 3, billed_credits: 1 + 2 * 2 });
    expect(done.result.posts).toHaveLength(2);
    expect(await usage(ws)).toMatchObject({ credits_used: 5, credits_reserved: 0, credits_remaining: 95 });
  });
});

describe('running → failed on terminal provider failures', () => {
  it.each([
    ['sandbox_not_found', 'target_not_found'],
    ['sandbox_private', 'target_private'],
  ])('%s fails with %s, result null, reservation released, billed 0', async (token, code) => {
    const ws = await stack.workspace({ credits: 100 });
    const job = await submit(ws, { operation: 'posts', target: `acct_${token}`, limit: 10 });
    const done = await waitFor(ws, job.id, terminal);
    expect(done).toMatchObject({ status: 'failed', result: null, billed_credits: 0, billed_units: 0, attempts: 1 });
    expect(done.error).toMatchObject({ code, retryable: false });
    expect(typeof done.error.message).toBe('string');
    expect(done.finished_at).not.toBeNull();
    expect(await usage(ws)).toMatchObject({ credits_used: 0, credits_reserved: 0, credits_remaining: 100 });
    expect(await reservationStatus(job.id)).toBe('released');
  });
});

describe('cancel', () => {
  it('cancels a running job cooperatively and discards the provider result', async () => {
    const ws = await stack.workspace({ credits: 1000 });
    // Three pages of 100, 700 ms each: cancel once the first page is checkpointed.
    const job = await submit(ws, { platform: 'youtube', operation: 'playlist_items', target: 'PLsandbox_slow_700', limit: 300 });
    const running = await waitFor(ws, job.id, (j) => j.status === 'running' && j.progress_current > 0);
    expect(running.progress_current).toBe(100);
    expect((await usage(ws)).credits_reserved).toBe(300);

    const res = await stack.api.post(`/v1/jobs/${job.id}/cancel`, { headers: ws.auth });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'cancelled', result: null, billed_credits: 0 });
    expect(res.body.cancel_requested_at).not.toBeNull();
    expect(await usage(ws)).toMatchObject({ credits_used: 0, credits_reserved: 0, credits_remaining: 1000 });

    const again = await stack.api.post(`/v1/jobs/${job.id}/cancel`, { headers: ws.auth });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ status: 'cancelled', cancel_requested_at: res.body.cancel_requested_at });

    // Past the moment the last slow page would have been delivered, the job is still cancelled.
    await new Promise((resolve) => setTimeout(resolve, 1800));
    const later = await stack.api.get(`/v1/jobs/${job.id}`, { headers: ws.auth });
    expect(later.body).toMatchObject({ status: 'cancelled', result: null, billed_credits: 0, result_count: null });
    expect(await usage(ws)).toMatchObject({ credits_used: 0, credits_reserved: 0, credits_remaining: 1000 });
    expect(await reservationStatus(job.id)).toBe('released');
    const pages = await stack.runtime.db.selectFrom('job_result_pages').select('page_no').where('job_id', '=', job.id).execute();
    expect(pages).toEqual([]);
    const settles = await stack.runtime.db
      .selectFrom('credit_ledger')
      .select('id')
      .where('job_id', '=', job.id)
      .where('entry_type', '=', 'settle')
      .execute();
    expect(settles).toEqual([]);
  });

  it('cancel of a completed job returns it unchanged', async () => {
    const ws = await stack.workspace({ credits: 100 });
    const job = await submit(ws, { operation: 'posts', target: 'natgeo', limit: 3 });
    const done = await waitFor(ws, job.id, terminal);
    expect(done.status).toBe('completed');
    const res = await stack.api.post(`/v1/jobs/${job.id}/cancel`, { headers: ws.auth });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(done);
    expect(await usage(ws)).toMatchObject({ credits_used: 6, credits_reserved: 0 });
  });

  it('cancel of a failed job returns it unchanged', async () => {
    const ws = await stack.workspace({ credits: 100 });
    const job = await submit(ws, { operation: 'posts', target: 'x_sandbox_private', limit: 3 });
    const done = await waitFor(ws, job.id, terminal);
    expect(done.status).toBe('failed');
    const res = await stack.api.post(`/v1/jobs/${job.id}/cancel`, { headers: ws.auth });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(done);
  });
});

describe('usage invariant', () => {
  it('holds before, during and after a mix of jobs', async () => {
    const ws = await stack.workspace({ credits: 500 });
    expect(await usage(ws)).toMatchObject({ credit_limit: 500, credits_used: 0, credits_reserved: 0, credits_remaining: 500 });
    const letGo = sandbox.hold();
    const slow = await submit(ws, { operation: 'posts', target: 'slowpoke_sandbox_slow_300', limit: 50 });
    const quick = await submit(ws, { operation: 'posts', target: 'quick', limit: 10 });
    const failing = await submit(ws, { operation: 'posts', target: 'gone_sandbox_not_found', limit: 10 });
    // The quick jobs may already be done; whatever the moment, the invariant holds.
    const early = await usage(ws);
    expect(early.credits_reserved).toBeGreaterThanOrEqual(100);
    expect(early.credits_used + early.credits_reserved).toBeLessThanOrEqual(140);

    await waitFor(ws, quick.id, terminal);
    await waitFor(ws, failing.id, terminal);
    const during = await usage(ws);
    expect((await stack.api.get(`/v1/jobs/${slow.id}`, { headers: ws.auth })).body.status).not.toBe('completed');
    expect(during).toMatchObject({ credits_used: 20, credits_reserved: 100, credits_remaining: 380 });

    letGo();
    await waitFor(ws, slow.id, terminal);
    expect(await usage(ws)).toMatchObject({ credits_used: 120, credits_reserved: 0, credits_remaining: 380 });
  });
});

describe('POST /v1/extract', () => {
  it('answers 200 with the completed job and its final billing', async () => {
    const ws = await stack.workspace({ credits: 100 });
    const res = await stack.api.post('/v1/extract', {
      headers: ws.auth,
      body: { operation: 'posts', target: 'natgeo_sandbox_slow_200', limit: 5 },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'completed', result_count: 5, billed_credits: 10, progress_current: 5 });
    expect(res.body.result).toHaveLength(5);
    expect(await usage(ws)).toMatchObject({ credits_used: 10, credits_reserved: 0, credits_remaining: 90 });
  });

  it('answers instagram profile with billed_credits 1', async () => {
    const ws = await stack.workspace({ credits: 100 });
    const res = await stack.api.post('/v1/extract', { headers: ws.auth, body: { operation: 'profile', target: 'natgeo' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'completed', billed_credits: 1, result_count: 1 });
  });

  it('a terminal failure is 502 extraction_failed naming the job and the cause', async () => {
    const ws = await stack.workspace({ credits: 100 });
    const res = await stack.api.post('/v1/extract', {
      headers: ws.auth,
      body: { operation: 'posts', target: 'nobody_sandbox_not_found', limit: 5 },
    });
    expect(res.status).toBe(502);
    expect(res.body.detail).toMatchObject({ error: 'extraction_failed', cause: { code: 'target_not_found' } });
    expect(res.body.detail.job_id).toMatch(/^job_/);
    const job = await stack.api.get(`/v1/jobs/${res.body.detail.job_id}`, { headers: ws.auth });
    expect(job.body).toMatchObject({ status: 'failed', billed_credits: 0 });
    expect(await usage(ws)).toMatchObject({ credits_used: 0, credits_reserved: 0, credits_remaining: 100 });
  });

  it('an effective limit above 200 is 400 invalid_request pointing to POST /v1/jobs, writing nothing', async () => {
    const ws = await stack.workspace({ credits: 10_000 });
    const res = await stack.api.post('/v1/extract', {
      headers: ws.auth,
      body: { platform: 'twitter', operation: 'followers', target: 'jack', limit: 1000 },
    });
    expect(res.status).toBe(400);
    expect(res.body.detail.error).toBe('invalid_request');
    expect(JSON.stringify(res.body.detail)).toContain('/v1/jobs');
    expect(await usage(ws)).toMatchObject({ credits_reserved: 0, credits_used: 0 });
    const list = await stack.api.get('/v1/jobs', { headers: ws.auth });
    expect(list.body).toEqual([]);
  });
});
