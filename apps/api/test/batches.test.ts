import { eventually, type SeededWorkspace, startTestStack, type TestStack } from '@sdx/testing';

/** Batches through HTTP, with a real worker: fan-out, aggregate status, settlement, cancel, tenancy. */
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ withWorker: true });
});
afterAll(async () => {
  await stack.close();
});

interface Batch {
  id: string;
  status: string;
  target_count: number;
  queued_count: number;
  running_count: number;
  completed_count: number;
  failed_count: number;
  cancelled_count: number;
  result_count: number;
  reserved_credits: number;
  billed_credits: number;
  cancel_requested_at: string | null;
  idempotent_replay: boolean;
  jobs?: Array<{ id: string; target: string; status: string }>;
}

interface Usage {
  credit_limit: number;
  credits_used: number;
  credits_reserved: number;
  credits_remaining: number;
  units_used: number;
  units_reserved: number;
}

const TERMINAL = ['completed', 'failed', 'cancelled'];

async function workspace(options: Parameters<TestStack['workspace']>[0] = {}): Promise<SeededWorkspace> {
  return stack.workspace({ rateLimitPerMinute: 100_000, ...options });
}

async function getBatch(ws: SeededWorkspace, id: string): Promise<Batch> {
  const res = await stack.api.get(`/v1/batches/${id}`, { headers: ws.auth });
  expect(res.status).toBe(200);
  return res.body as Batch;
}

async function usage(ws: SeededWorkspace): Promise<Usage> {
  const res = await stack.api.get('/v1/usage/current', { headers: ws.auth });
  expect(res.status).toBe(200);
  return res.body as Usage;
}

/** Invariants of one observed batch: counts cover every child, summaries agree with counts. */
function checkCounts(batch: Batch): void {
  const { queued_count, running_count, completed_count, failed_count, cancelled_count } = batch;
  expect(queued_count + running_count + completed_count + failed_count + cancelled_count).toBe(batch.target_count);
  const byStatus = (s: string) => batch.jobs!.filter((j) => j.status === s).length;
  expect(batch.jobs).toHaveLength(batch.target_count);
  expect([byStatus('queued'), byStatus('running'), byStatus('completed'), byStatus('failed'), byStatus('cancelled')]).toEqual([
    queued_count,
    running_count,
    completed_count,
    failed_count,
    cancelled_count,
  ]);
  const active = queued_count + running_count;
  if (active === 0) {
    expect(TERMINAL).toContain(batch.status);
    expect(batch.reserved_credits).toBe(0);
  } else {
    expect(batch.status).toBe(queued_count === batch.target_count ? 'queued' : 'running');
  }
}

/** A stable snapshot: the batch read twice around the usage read, unchanged in between. */
async function snapshot(ws: SeededWorkspace, id: string): Promise<{ batch: Batch; usage: Usage }> {
  for (;;) {
    const before = await getBatch(ws, id);
    const u = await usage(ws);
    const after = await getBatch(ws, id);
    if (JSON.stringify(before) === JSON.stringify(after)) return { batch: after, usage: u };
  }
}

const post = (ws: SeededWorkspace, body: unknown, headers: Record<string, string> = {}) =>
  stack.api.post('/v1/batches', { headers: { ...ws.auth, ...headers }, body });

describe('batch lifecycle', () => {
  it('fans out, retries and settles each child, and the counts and credits add up at every step', async () => {
    const ws = await workspace({ credits: 1000 });
    // The slow child keeps the batch running for 4 s: the first reads of a test file's routes
    // (the validator compiles their schemas then) can take a second or two on a loaded machine.
    const targets = ['alice', 'bob_sandbox_slow_4000', 'carol_sandbox_not_found', 'dave_sandbox_flaky_1'];
    // instagram posts: 2 credits per post, limit 5 → 10 credits reserved per child.
    const created = await post(ws, { operation: 'posts', targets, limit: 5 });
    expect(created.status).toBe(202);
    const batch = created.body as Batch;
    expect(batch).toMatchObject({
      status: 'queued',
      target_count: 4,
      queued_count: 4,
      running_count: 0,
      completed_count: 0,
      reserved_credits: 40,
      billed_credits: 0,
      result_count: 0,
      cancel_requested_at: null,
      idempotent_replay: false,
    });
    expect(batch.id).toMatch(/^bat_/);
    expect(batch.jobs!.map((j) => j.target)).toEqual(targets);
    expect(batch.jobs!.every((j) => j.status === 'queued' && j.id.startsWith('job_'))).toBe(true);

    const seen = new Set<string>();
    let final: Batch | undefined;
    // The children take a few seconds (a slow target, a retry's backoff); a loaded machine may take several times that.
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const { batch: b, usage: u } = await snapshot(ws, batch.id);
      seen.add(b.status);
      checkCounts(b);
      // The workspace has no other work: what the batch holds and bills is the workspace's usage.
      expect(u.credits_reserved).toBe(b.reserved_credits);
      expect(u.credits_used).toBe(b.billed_credits);
      expect(u.credits_used + u.credits_reserved + u.credits_remaining).toBe(u.credit_limit);
      // Every active child holds its full reservation; finished ones hold nothing.
      expect(b.reserved_credits).toBe(10 * (b.queued_count + b.running_count));
      expect(b.billed_credits).toBe(2 * b.result_count);
      if (TERMINAL.includes(b.status)) {
        final = b;
        break;
      }
      await new Promise((r) => setTimeout(r, 40));
    }
    expect(final).toBeDefined();
    expect([...seen]).toContain('running');
    expect(final).toMatchObject({
      status: 'completed',
      completed_count: 3,
      failed_count: 1,
      cancelled_count: 0,
      result_count: 15,
      billed_credits: 30,
      reserved_credits: 0,
    });
    expect(final!.jobs!.map((j) => j.status)).toEqual(['completed', 'completed', 'failed', 'completed']);
    const u = await usage(ws);
    expect(u).toMatchObject({ credits_used: 30, credits_reserved: 0, credits_remaining: 970, units_used: 15, units_reserved: 0 });

    // Children are ordinary jobs: retried and settled on their own.
    const flaky = await stack.api.get(`/v1/jobs/${final!.jobs![3].id}`, { headers: ws.auth });
    expect(flaky.body).toMatchObject({ status: 'completed', attempts: 2, billed_credits: 10, result_count: 5 });
    const missing = await stack.api.get(`/v1/jobs/${final!.jobs![2].id}`, { headers: ws.auth });
    expect(missing.body).toMatchObject({ status: 'failed', billed_credits: 0, result: null });
    expect(missing.body.error.code).toBe('target_not_found');
  }, 120_000);

  it('is failed when every child failed', async () => {
    const ws = await workspace({ credits: 100 });
    const created = await post(ws, { operation: 'profile', targets: ['x_sandbox_not_found', 'y_sandbox_private'] });
    expect(created.status).toBe(202);
    const done = await eventually(async () => {
      const b = await getBatch(ws, created.body.id);
      return TERMINAL.includes(b.status) ? b : undefined;
    });
    expect(done).toMatchObject({ status: 'failed', failed_count: 2, billed_credits: 0, reserved_credits: 0, result_count: 0 });
    expect((await usage(ws)).credits_remaining).toBe(100);
  });

  it('trims targets, keeps their order and lists batches newest first', async () => {
    const ws = await workspace();
    const first = await post(ws, { operation: 'profile', targets: ['  zed ', 'amy'] });
    const second = await post(ws, { platform: 'tiktok', operation: 'profile', targets: ['solo'] });
    expect(first.status).toBe(202);
    expect(second.status).toBe(202);
    expect(first.body.jobs.map((j: { target: string }) => j.target)).toEqual(['zed', 'amy']);
    expect(first.body).toMatchObject({ platform: 'instagram', operation: 'profile', requested_limit: 1, include_posts: 0 });

    const list = await stack.api.get('/v1/batches', { headers: ws.auth });
    expect(list.status).toBe(200);
    expect(list.body.map((b: Batch) => b.id)).toEqual([second.body.id, first.body.id]);
    expect(list.body.every((b: Batch) => b.jobs === undefined)).toBe(true);

    const withJobs = await stack.api.get('/v1/batches', { headers: ws.auth, query: { include_jobs: true, limit: 1 } });
    expect(withJobs.status).toBe(200);
    expect(withJobs.body).toHaveLength(1);
    expect(withJobs.body[0].id).toBe(second.body.id);
    expect(withJobs.body[0].jobs).toEqual([{ id: second.body.jobs[0].id, target: 'solo', status: expect.any(String) }]);
  });
});

describe('batch validation and admission', () => {
  it('rejects duplicates differing only by case and spaces, naming them', async () => {
    const ws = await workspace();
    const res = await post(ws, { operation: 'profile', targets: ['Alice', 'bob', ' alice ', 'BOB', 'carol'] });
    expect(res.status).toBe(422);
    expect(res.body.detail.error).toBe('duplicate_batch_target');
    expect(res.body.detail.duplicates).toEqual(['Alice', 'bob']);
    expect((await stack.api.get('/v1/batches', { headers: ws.auth })).body).toEqual([]);
  });

  it('finds duplicates on the target as read (a username and its profile link are one target): refused before anything is billed, in the quote too', async () => {
    const ws = await workspace();
    const body = { platform: 'instagram', operation: 'profile', targets: ['nasa', 'natgeo', 'https://www.instagram.com/nasa/', '@NatGeo'] };
    const res = await post(ws, body);
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual({
      error: 'duplicate_batch_target',
      message:
        'Batch targets must be unique; these name the same target: nasa and https://www.instagram.com/nasa/; natgeo and @NatGeo. Keep one of each.',
      duplicates: ['nasa', 'natgeo'],
    });
    expect((await stack.api.get('/v1/batches', { headers: ws.auth })).body).toEqual([]);
    expect((await stack.api.get('/v1/usage/current', { headers: ws.auth })).body.credits_reserved).toBe(0);
    const quote = await stack.api.post('/v1/quotes', { headers: ws.auth, body });
    expect(quote.status).toBe(422);
    expect(quote.body.detail.error).toBe('duplicate_batch_target');
    // Without the duplicate the batch is admitted, each target billed once.
    const ok = await post(ws, { platform: 'instagram', operation: 'profile', targets: ['nasa', 'natgeo'] });
    expect(ok.status).toBe(202);
  });

  it('rejects 0 and 101 targets with a validation error', async () => {
    const ws = await workspace();
    const many = Array.from({ length: 101 }, (_, i) => `user${i}`);
    const res = await post(ws, { operation: 'profile', targets: many });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual(expect.arrayContaining([expect.objectContaining({ loc: ['body', 'targets'], type: 'too_long' })]));
    const none = await post(ws, { operation: 'profile', targets: [] });
    expect(none.status).toBe(422);
    expect(none.body.detail[0].loc).toEqual(['body', 'targets']);
    const hundred = await post(ws, { operation: 'profile', targets: many.slice(0, 100) });
    expect(hundred.status).toBe(202);
    expect(hundred.body.target_count).toBe(100);
  });

  it('names the offending target of a bad target list and checks the catalog first', async () => {
    const ws = await workspace();
    const bad = await post(ws, { operation: 'profile', targets: ['fine', 'not a username!'] });
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toMatchObject({ error: 'invalid_target', loc: ['body', 'targets', 1] });
    const unsupported = await post(ws, { platform: 'youtube', operation: 'followers', targets: ['not a username!'] });
    expect(unsupported.status).toBe(422);
    expect(unsupported.body.detail.error).toBe('unsupported_operation');
    const extra = await post(ws, { operation: 'profile', targets: ['a'], target: 'b' });
    expect(extra.status).toBe(422);
    expect(extra.body.detail).toEqual(
      expect.arrayContaining([expect.objectContaining({ loc: ['body', 'target'], type: 'extra_forbidden' })]),
    );
  });

  it('answers 402 for an unaffordable batch and creates nothing', async () => {
    const ws = await workspace({ credits: 50 });
    const before = await usage(ws);
    // 3 targets × 12 posts × 2 credits = 72 > 50, though one or two children would fit.
    const res = await post(ws, { operation: 'posts', targets: ['a1', 'a2', 'a3'] });
    expect(res.status).toBe(402);
    expect(res.body.detail).toMatchObject({ error: 'insufficient_credits', available: 50, reserved: 0, required: 72 });
    expect((await stack.api.get('/v1/batches', { headers: ws.auth })).body).toEqual([]);
    expect((await stack.api.get('/v1/jobs', { headers: ws.auth })).body).toEqual([]);
    expect(await usage(ws)).toEqual(before);
  });

  it('answers 429 when the children would exceed the active-job cap, and creates nothing', async () => {
    const ws = await workspace({ maxActiveJobs: 3 });
    const res = await post(ws, { operation: 'profile', targets: ['c1', 'c2', 'c3', 'c4'] });
    expect(res.status).toBe(429);
    expect(res.body.detail).toMatchObject({ error: 'concurrent_job_limit_exceeded', active: 0, limit: 3 });
    expect((await stack.api.get('/v1/batches', { headers: ws.auth })).body).toEqual([]);
    expect((await usage(ws)).credits_reserved).toBe(0);
    const fits = await post(ws, { operation: 'profile', targets: ['c1', 'c2', 'c3'] });
    expect(fits.status).toBe(202);
  });

  it('replays an Idempotency-Key without a second reservation and refuses a different body', async () => {
    const ws = await workspace({ credits: 100 });
    const body = { operation: 'profile', targets: ['i1_sandbox_slow_2000', 'i2_sandbox_slow_2000'] };
    const first = await post(ws, body, { 'Idempotency-Key': 'batch-key-1' });
    expect(first.status).toBe(202);
    const again = await post(ws, body, { 'Idempotency-Key': 'batch-key-1' });
    expect(again.status).toBe(202);
    expect(again.body.id).toBe(first.body.id);
    expect(again.body.idempotent_replay).toBe(true);
    expect(again.body.jobs.map((j: { id: string }) => j.id)).toEqual(first.body.jobs.map((j: { id: string }) => j.id));
    expect((await usage(ws)).credits_reserved + (await usage(ws)).credits_used).toBe(2);
    const other = await post(ws, { ...body, targets: ['i3'] }, { 'Idempotency-Key': 'batch-key-1' });
    expect(other.status).toBe(409);
    expect(other.body.detail.error).toBe('idempotency_key_conflict');
    expect((await stack.api.get('/v1/batches', { headers: ws.auth })).body).toHaveLength(1);
  });
});

describe('batch cancellation', () => {
  it('cancels the children still queued or running, releases their reservations, and is idempotent', async () => {
    const ws = await workspace({ credits: 1000 });
    const targets = [
      'quick',
      's1_sandbox_slow_4000',
      's2_sandbox_slow_4000',
      's3_sandbox_slow_4000',
      's4_sandbox_slow_4000',
      's5_sandbox_slow_4000',
    ];
    const created = await post(ws, { operation: 'posts', targets, limit: 5 });
    expect(created.status).toBe(202);
    const id = created.body.id as string;
    const midway = await eventually(async () => {
      const b = await getBatch(ws, id);
      return b.completed_count === 1 && b.running_count > 0 ? b : undefined;
    });
    expect(midway.status).toBe('running');

    const cancelled = await stack.api.post(`/v1/batches/${id}/cancel`, { headers: ws.auth });
    expect(cancelled.status).toBe(200);
    const b = cancelled.body as Batch;
    checkCounts(b);
    expect(b).toMatchObject({
      status: 'cancelled',
      completed_count: 1,
      cancelled_count: 5,
      queued_count: 0,
      running_count: 0,
      reserved_credits: 0,
      billed_credits: 10,
      result_count: 5,
    });
    expect(b.cancel_requested_at).not.toBeNull();
    expect(b.jobs!.map((j) => j.status)).toEqual(['completed', 'cancelled', 'cancelled', 'cancelled', 'cancelled', 'cancelled']);
    expect(await usage(ws)).toMatchObject({ credits_used: 10, credits_reserved: 0, credits_remaining: 990 });

    const again = await stack.api.post(`/v1/batches/${id}/cancel`, { headers: ws.auth });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(b);

    // A cancelled running child's late delivery is discarded, never billed.
    await new Promise((r) => setTimeout(r, 1500));
    expect(await getBatch(ws, id)).toEqual(b);
    expect(await usage(ws)).toMatchObject({ credits_used: 10, credits_reserved: 0 });
    const child = await stack.api.get(`/v1/jobs/${b.jobs![1].id}`, { headers: ws.auth });
    expect(child.body).toMatchObject({ status: 'cancelled', billed_credits: 0, result: null });
  });

  it('leaves a finished batch as it is', async () => {
    const ws = await workspace();
    const created = await post(ws, { operation: 'profile', targets: ['done1'] });
    const done = await eventually(async () => {
      const b = await getBatch(ws, created.body.id);
      return b.status === 'completed' ? b : undefined;
    });
    const res = await stack.api.post(`/v1/batches/${done.id}/cancel`, { headers: ws.auth });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(done);
  });
});

describe('batch tenancy', () => {
  it("answers 404 batch_not_found for another workspace's batch and for unknown IDs", async () => {
    const owner = await workspace();
    const stranger = await workspace();
    const created = await post(owner, { operation: 'profile', targets: ['mine_sandbox_slow_1000'] });
    expect(created.status).toBe(202);
    const id = created.body.id as string;
    for (const res of [
      await stack.api.get(`/v1/batches/${id}`, { headers: stranger.auth }),
      await stack.api.post(`/v1/batches/${id}/cancel`, { headers: stranger.auth }),
      await stack.api.get(`/v1/batches/${id}/export`, { headers: stranger.auth }),
      await stack.api.get('/v1/batches/bat_unknown', { headers: owner.auth }),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.detail.error).toBe('batch_not_found');
    }
    expect((await stack.api.get('/v1/batches', { headers: stranger.auth })).body).toEqual([]);
    // The stranger's cancel did nothing.
    expect((await getBatch(owner, id)).cancel_requested_at).toBeNull();
  });

  it('requires credentials', async () => {
    const res = await stack.api.get('/v1/batches');
    expect(res.status).toBe(401);
    expect(res.body.detail.error).toBe('missing_authentication');
  });
});

describe('batch enqueue recovery', () => {
  it('runs children whose queue entries were lost after commit (the reconciler re-enqueues queued jobs)', async () => {
    // Redis keeps its data here, so the reconciler finds the lost entries by its periodic recheck.
    const own = await startTestStack({ env: { RECONCILE_RECHECK_MS: '1000' } });
    const waiting = async () => {
      const counts = await own.runtime.queues.batchChildren.getJobCounts('waiting', 'prioritized');
      return counts.waiting + counts.prioritized;
    };
    try {
      const ws = await own.workspace({ credits: 100 });
      const created = await own.api.post('/v1/batches', {
        headers: ws.auth,
        body: { operation: 'profile', targets: ['lost1', 'lost2', 'lost3'] },
      });
      expect(created.status).toBe(202);
      expect(await waiting()).toBe(3);
      // As if the process had died between commit and enqueue: the rows exist, the entries do not.
      await own.runtime.queues.batchChildren.obliterate({ force: true });
      expect(await waiting()).toBe(0);

      own.startWorker(2);
      const done = await eventually(async () => {
        const res = await own.api.get(`/v1/batches/${created.body.id}`, { headers: ws.auth });
        return res.body.status === 'completed' ? res.body : undefined;
      }, 15_000);
      expect(done).toMatchObject({ completed_count: 3, billed_credits: 3, reserved_credits: 0, result_count: 3 });
    } finally {
      await own.close();
    }
  });
});
