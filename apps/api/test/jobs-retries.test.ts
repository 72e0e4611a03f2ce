import { startTestStack, type SeededWorkspace, type TestStack, waitForJob, usageChecked, type LooseJson } from '@sdx/testing';

/**
 * Retryable failures (running → queued with next_attempt_at in the future, the reservation
 * intact), exhausted retries (failed, retries_exhausted, released), and POST /v1/extract past
 * its sync timeout. A retry base of 1.5 s keeps the queued-for-retry state observable on a loaded machine.
 */

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({
    withWorker: true,
    env: { JOB_RETRY_BASE_MS: '1500', JOB_MAX_ATTEMPTS: '3', SYNC_TIMEOUT_MS: '400' },
  });
});
afterAll(async () => {
  await stack.close();
});

const usage = (ws: SeededWorkspace) => usageChecked(stack, ws);

const waitFor = (ws: SeededWorkspace, jobId: string, accept: (job: LooseJson) => boolean, timeoutMs?: number) =>
  waitForJob(stack, ws.auth, jobId, accept, timeoutMs);

const terminal = (job: { status: string }) => ['completed', 'failed', 'cancelled'].includes(job.status);

async function reservationStatus(jobId: string) {
  const row = await stack.runtime.db.selectFrom('credit_reservations').select('status').where('job_id', '=', jobId).executeTakeFirst();
  return row?.status;
}

async function ledgerEntries(jobId: string) {
  const rows = await stack.runtime.db.selectFrom('credit_ledger').select('entry_type').where('job_id', '=', jobId).orderBy('id').execute();
  return rows.map((r) => r.entry_type);
}

it('a retryable failure sends the job back to queued with next_attempt_at in the future and the reservation intact', async () => {
  const ws = await stack.workspace({ credits: 100 });
  const created = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { operation: 'posts', target: 'natgeo_sandbox_flaky_1', limit: 10 },
  });
  expect(created.status).toBe(202);
  expect(created.body.max_attempts).toBe(3);

  const retrying = await waitFor(ws, created.body.id, (j) => j.status === 'queued' && j.attempts === 1);
  // When the job went back to queued (the retry statement marks it): its next attempt lies ahead of that.
  const { enqueued_at: requeuedAt } = await stack.runtime.db
    .selectFrom('jobs')
    .select('enqueued_at')
    .where('id', '=', created.body.id)
    .executeTakeFirstOrThrow();
  expect(retrying.next_attempt_at).not.toBeNull();
  expect(new Date(retrying.next_attempt_at).getTime()).toBeGreaterThan(requeuedAt.getTime());
  expect(retrying).toMatchObject({ result: null, error: null, billed_credits: 0, finished_at: null });
  expect(retrying.progress_message).toEqual(expect.stringContaining('upstream_unavailable'));
  expect(await usage(ws)).toMatchObject({ credits_used: 0, credits_reserved: 20, credits_remaining: 80 });
  expect(await reservationStatus(created.body.id)).toBe('held');

  const done = await waitFor(ws, created.body.id, terminal);
  expect(done).toMatchObject({
    status: 'completed',
    attempts: 2,
    result_count: 10,
    billed_credits: 20,
    next_attempt_at: null,
    error: null,
  });
  expect(new Date(done.finished_at).getTime()).toBeGreaterThanOrEqual(new Date(retrying.next_attempt_at).getTime() - 1000);
  expect(await usage(ws)).toMatchObject({ credits_used: 20, credits_reserved: 0, credits_remaining: 80 });
  expect(await ledgerEntries(created.body.id)).toEqual(['reserve', 'settle']);
});

it('exhausted retries fail the job with retries_exhausted, attempts = max_attempts, reservation released', async () => {
  const ws = await stack.workspace({ credits: 100 });
  const created = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { operation: 'posts', target: 'natgeo_sandbox_flaky_9', limit: 10 },
  });
  expect(created.status).toBe(202);
  const attemptsSeen = new Set<number>();
  const done = await waitFor(ws, created.body.id, (j) => {
    if (j.status === 'queued') attemptsSeen.add(j.attempts);
    return terminal(j);
  });
  expect(done).toMatchObject({ status: 'failed', attempts: 3, max_attempts: 3, result: null, billed_credits: 0, next_attempt_at: null });
  expect(done.error).toMatchObject({ code: 'retries_exhausted', retryable: false });
  expect([...attemptsSeen].filter((a) => a > 0).sort()).toEqual([1, 2]);
  expect(await usage(ws)).toMatchObject({ credits_used: 0, credits_reserved: 0, credits_remaining: 100 });
  expect(await reservationStatus(created.body.id)).toBe('released');
  expect(await ledgerEntries(created.body.id)).toEqual(['reserve', 'release']);
});

it('cancel of a job waiting for its retry is immediate and the retry never runs', async () => {
  const ws = await stack.workspace({ credits: 100 });
  const created = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { operation: 'posts', target: 'again_sandbox_flaky_1', limit: 10 },
  });
  await waitFor(ws, created.body.id, (j) => j.status === 'queued' && j.attempts === 1);
  const res = await stack.api.post(`/v1/jobs/${created.body.id}/cancel`, { headers: ws.auth });
  expect(res.body).toMatchObject({ status: 'cancelled', attempts: 1, next_attempt_at: null });
  expect(await usage(ws)).toMatchObject({ credits_used: 0, credits_reserved: 0, credits_remaining: 100 });
  // The retry entry comes due within 3 s; it must find nothing to run.
  await new Promise((resolve) => setTimeout(resolve, 3500));
  const later = await stack.api.get(`/v1/jobs/${created.body.id}`, { headers: ws.auth });
  expect(later.body).toMatchObject({ status: 'cancelled', attempts: 1, billed_credits: 0 });
  expect(await ledgerEntries(created.body.id)).toEqual(['reserve', 'release']);
});

describe('POST /v1/extract past SYNC_TIMEOUT_MS', () => {
  it('answers 202 with the job, which stays pollable and completes', async () => {
    const ws = await stack.workspace({ credits: 100 });
    const started = Date.now();
    const res = await stack.api.post('/v1/extract', {
      headers: ws.auth,
      body: { operation: 'posts', target: 'natgeo_sandbox_slow_3000', limit: 5 },
    });
    // Answered after the 400 ms wait, long before the job (3 s) could have completed.
    expect(Date.now() - started).toBeLessThan(3000);
    expect(res.status).toBe(202);
    expect(['queued', 'running']).toContain(res.body.status);
    expect(res.body.result).toBeNull();
    expect(await usage(ws)).toMatchObject({ credits_reserved: 10 });
    const done = await waitFor(ws, res.body.id, terminal);
    expect(done).toMatchObject({ status: 'completed', result_count: 5, billed_credits: 10 });
    expect(await usage(ws)).toMatchObject({ credits_used: 10, credits_reserved: 0, credits_remaining: 90 });
  });
});
