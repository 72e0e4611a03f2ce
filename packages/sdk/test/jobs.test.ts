import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { ApiError, type Client, InsufficientCreditsError, type Job, RateLimitError } from '@sdx/sdk';
import { countWorkspaceRows, type SeededWorkspace, type ServedStack, startServedStack, type TestStack } from '@sdx/testing';
import { clientFor, type Sent } from './support';

/** Jobs, batches, exports and errors through the SDK, against the real service. */

let stack: TestStack;
let served: ServedStack;
let dir: string;
beforeAll(async () => {
  served = await startServedStack({ withWorker: true, env: { SYNC_TIMEOUT_MS: '300' } });
  stack = served.stack;
  dir = mkdtempSync(path.join(tmpdir(), 'sdx-sdk-'));
});
afterAll(async () => {
  await served.close();
  rmSync(dir, { recursive: true, force: true });
});

let ws: SeededWorkspace;
let sent: Sent[];
let sdx: Client;
beforeEach(async () => {
  ws = await stack.workspace({ credits: 100_000 });
  sent = [];
  sdx = clientFor(served.url, ws, { sent });
});

it('creates a job with a generated Idempotency-Key, waits for it with progress, and reads it back', async () => {
  const created = await sdx.jobs.create({ platform: 'twitter', operation: 'followers', target: 'nasa', limit: 3000 });
  expect(created).toMatchObject({ status: 'queued', requested_limit: 3000 });
  const post = sent.find((s) => s.method === 'POST' && s.path === '/v1/jobs')!;
  expect(post.headers.get('idempotency-key')).toMatch(/^[0-9a-f-]{32,36}$/);
  expect(post.headers.get('authorization')).toBe(`Bearer ${ws.apiKey}`);
  expect(sent.every((s) => !s.path.includes(ws.apiKey))).toBe(true);

  const seen: Job[] = [];
  const done = await sdx.jobs.wait(created.id, { onProgress: (job) => seen.push(job), pollIntervalMs: 100 });
  expect(done).toMatchObject({ id: created.id, status: 'completed', result_count: 3000 });
  expect(Array.isArray(done.result) && done.result.length).toBe(3000);
  expect(seen.at(-1)!.status).toBe('completed');
  expect(seen.length).toBeGreaterThanOrEqual(1);

  expect(await sdx.jobs.get(created.id)).toMatchObject({ id: created.id, status: 'completed' });
  const page = await sdx.jobs.list({ limit: 5 });
  expect(page.data.map((j) => j.id)).toContain(created.id);
});

it('extracts at once (200), and waits when the service answers 202 after its sync timeout', async () => {
  const quick = await sdx.jobs.extract({ platform: 'instagram', operation: 'profile', target: 'natgeo' });
  expect(quick).toMatchObject({ status: 'completed', result_count: 1 });

  const progress: string[] = [];
  const slow = await sdx.jobs.extract(
    { platform: 'instagram', operation: 'profile', target: 'sandbox_slow_1200_extract' },
    { onProgress: (j) => progress.push(j.status), pollIntervalMs: 100 },
  );
  expect(slow.status).toBe('completed');
  expect(progress.at(-1)).toBe('completed');
  expect(sent.filter((s) => s.method === 'POST' && s.path === '/v1/extract')).toHaveLength(2);
});

it('throws extraction_failed when the extraction fails', async () => {
  const error = await sdx.jobs
    .extract({ platform: 'instagram', operation: 'profile', target: 'sandbox_not_found' })
    .catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ApiError);
  expect(error).toMatchObject({ status: 502, code: 'extraction_failed', requestId: expect.any(String) });
  expect((error as ApiError).detail).toMatchObject({ job_id: expect.stringMatching(/^job_/) });
});

it('cancels a job', async () => {
  const job = await sdx.jobs.create({ platform: 'instagram', operation: 'profile', target: 'sandbox_slow_5000_cancel' });
  const cancelled = await sdx.jobs.cancel(job.id);
  expect(cancelled.id).toBe(job.id);
  const final = await sdx.jobs.wait(job.id, { pollIntervalMs: 100 });
  expect(final).toMatchObject({ status: 'cancelled', billed_credits: 0 });
});

it('waits by polling when the event stream is refused or fails', async () => {
  const job = await sdx.jobs.create({ platform: 'instagram', operation: 'posts', target: 'natgeo', limit: 20 });
  for (const broken of [
    () =>
      Promise.resolve(
        new Response(JSON.stringify({ detail: { error: 'method_not_allowed', message: 'no' } }), {
          status: 405,
          headers: { 'content-type': 'application/json' },
        }),
      ),
    () => Promise.reject(new TypeError('fetch failed')),
  ]) {
    const paths: string[] = [];
    const client = clientFor(served.url, ws, {
      maxRetries: 0,
      fetch: async (input) => {
        const { pathname } = new URL(input.url);
        paths.push(pathname);
        return pathname.endsWith('/events') ? broken() : fetch(input);
      },
    });
    const done = await client.jobs.wait(job.id, { pollIntervalMs: 50 });
    expect(done.status).toBe('completed');
    expect(paths[0]).toBe(`/v1/jobs/${job.id}/events`);
    expect(paths.slice(1).every((p) => p === `/v1/jobs/${job.id}`)).toBe(true);
  }
});

it('stops waiting when the signal is aborted, and the job keeps running', async () => {
  const job = await sdx.jobs.create({ platform: 'instagram', operation: 'profile', target: 'sandbox_slow_1500_abort' });
  const controller = new AbortController();
  const waiting = sdx.jobs.wait(job.id, {
    signal: controller.signal,
    pollIntervalMs: 50,
    onProgress: () => controller.abort(new Error('stop')),
  });
  await expect(waiting).rejects.toThrow('stop');
  const final = await sdx.jobs.wait(job.id, { pollIntervalMs: 100 });
  expect(final.status).toBe('completed');
});

it('runs a batch: create, get, list, wait, export, cancel', async () => {
  const batch = await sdx.batches.create({ platform: 'instagram', operation: 'posts', targets: ['natgeo', 'nasa'], limit: 5 });
  expect(batch).toMatchObject({ status: 'queued', target_count: 2 });
  expect(sent.find((s) => s.path === '/v1/batches' && s.method === 'POST')!.headers.get('idempotency-key')).toBeTruthy();
  const done = await sdx.batches.wait(batch.id, { pollIntervalMs: 100 });
  expect(done).toMatchObject({ status: 'completed', completed_count: 2 });
  expect((await sdx.batches.get(batch.id)).id).toBe(batch.id);
  expect((await sdx.batches.list({ include_jobs: true })).data[0]).toMatchObject({ id: batch.id, jobs: expect.any(Array) });

  const file = path.join(dir, 'batch.csv');
  const result = await sdx.exports.download(batch.id, file, { format: 'csv' });
  const csv = readFileSync(file, 'utf8');
  expect(csv.split('\n')[0]).toMatch(/^"batch_id","job_id","target"/);
  expect(result.bytes).toBe(Buffer.byteLength(csv));

  const other = await sdx.batches.create({
    platform: 'instagram',
    operation: 'profile',
    targets: ['sandbox_slow_5000_a', 'sandbox_slow_5000_b'],
  });
  const cancelled = await sdx.batches.cancel(other.id);
  expect(cancelled.cancel_requested_at).not.toBeNull();
});

it('downloads exports to a file, a WritableStream and a Node stream, whole and streamed', async () => {
  const job = await sdx.jobs.extract({ platform: 'instagram', operation: 'posts', target: 'natgeo', limit: 12 });

  const file = path.join(dir, 'posts.csv');
  const saved = await sdx.exports.download(job.id, file, { format: 'csv' });
  const csv = readFileSync(file, 'utf8');
  expect(csv.trim().split('\n')).toHaveLength(13);
  expect(saved).toMatchObject({
    bytes: Buffer.byteLength(csv),
    contentType: expect.stringContaining('text/csv'),
    filename: expect.stringContaining('.csv'),
  });

  const chunks: Uint8Array[] = [];
  await sdx.exports.download(job.id, new WritableStream({ write: (chunk) => void chunks.push(chunk) }), { format: 'json' });
  expect(JSON.parse(Buffer.concat(chunks).toString('utf8'))).toHaveLength(12);

  const sink = new PassThrough();
  const collected: Buffer[] = [];
  sink.on('data', (chunk: Buffer) => collected.push(chunk));
  const written = await sdx.exports.download(job.id, sink, { format: 'xlsx' });
  expect(Buffer.concat(collected).subarray(0, 2).toString()).toBe('PK');
  expect(written.bytes).toBe(Buffer.concat(collected).length);

  const notReady = await sdx.jobs.create({ platform: 'instagram', operation: 'profile', target: 'sandbox_slow_3000_export' });
  await expect(sdx.exports.download(notReady.id, path.join(dir, 'never.csv'), { format: 'csv' })).rejects.toMatchObject({
    status: 409,
    code: 'results_not_ready',
  });
  expect(() => readFileSync(path.join(dir, 'never.csv'))).toThrow();
});

it('throws typed errors: validation (never retried), not found, insufficient credits, rate limit', async () => {
  const invalid = await sdx.jobs.create({ platform: 'instagram', operation: 'profile', target: 'x', limit: 0 }).catch((e: unknown) => e);
  expect(invalid).toBeInstanceOf(ApiError);
  expect(invalid).toMatchObject({ status: 422, code: 'validation_error' });
  expect((invalid as ApiError).issues[0].loc).toEqual(['body', 'limit']);
  expect(sent.filter((s) => s.method === 'POST')).toHaveLength(1);

  await expect(sdx.jobs.get('job_missing')).rejects.toMatchObject({ status: 404, code: 'job_not_found', requestId: expect.any(String) });

  const poor = await stack.workspace({ credits: 10 });
  const broke = await clientFor(served.url, poor)
    .jobs.create({ platform: 'twitter', operation: 'followers', target: 'nasa', limit: 1000 })
    .catch((e: unknown) => e);
  expect(broke).toBeInstanceOf(InsufficientCreditsError);
  expect(broke).toMatchObject({ status: 402, available: 10, required: 2000 });
  expect(await countWorkspaceRows(stack, 'jobs', poor.workspaceId)).toBe(0);

  const limited = await stack.workspace({ rateLimitPerMinute: 2 });
  const client = clientFor(served.url, limited, { retry: { maxRetryAfterMs: 0 } });
  await client.account.get();
  await client.account.get();
  const tooMany = await client.account.get().catch((e: unknown) => e);
  expect(tooMany).toBeInstanceOf(RateLimitError);
  expect((tooMany as RateLimitError).retryAfter).toBeGreaterThan(0);
});
