import {
  eventually,
  spawnWorkerProcess,
  startTestStack,
  type SeededWorkspace,
  type TestStack,
  usageChecked,
  type WorkerProcess,
} from '@sdx/testing';

/**
 * Shutdown hands work back: a worker process told to stop (SIGTERM) gives its attempts
 * WORKER_SHUTDOWN_GRACE_MS to finish; one still extracting after that goes back to queued at
 * once (its attempt not counted, its checkpoint kept) with a queue entry, instead of waiting
 * for its heartbeat to expire. The next worker resumes it and it is billed once.
 */

// A heartbeat timeout far longer than the test: only a hand-back can get the job going again in time.
const TIMING = { HEARTBEAT_TIMEOUT_MS: '60000', HEARTBEAT_INTERVAL_MS: '200', RECONCILE_INTERVAL_MS: '500' };

let stack: TestStack;
let worker: WorkerProcess | null = null;

beforeAll(async () => {
  stack = await startTestStack({ env: TIMING });
});
afterAll(async () => {
  worker?.kill();
  await stack.close();
});

const usage = (ws: SeededWorkspace) => usageChecked(stack, ws);

it('a worker stopped mid-job hands the job back at once; the next worker resumes it and it is billed once', async () => {
  const ws = await stack.workspace({ credits: 1000 });
  // The worker process itself (node with tsx's loader), so SIGTERM reaches its own handler.
  worker = spawnWorkerProcess(stack, { WORKER_SHUTDOWN_GRACE_MS: '300', ...TIMING }, { direct: true });
  const child = worker.proc;
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));

  // Four pages of 100 playlist items, 700 ms each.
  const created = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'youtube', operation: 'playlist_items', target: 'PLstop_sandbox_slow_700', limit: 400 },
  });
  expect(created.status).toBe(202);
  const jobId = created.body.id as string;
  await eventually(
    async () => {
      const r = await stack.api.get(`/v1/jobs/${jobId}`, { headers: ws.auth });
      return r.body.status === 'running' && r.body.progress_current > 0 ? r.body : undefined;
    },
    30_000,
    25,
  ).catch((error) => {
    throw new Error(`${String(error)}\nworker output:\n${worker!.output()}`);
  });

  const stoppedAt = Date.now();
  child.kill('SIGTERM');
  expect(await exited).toBe(0);
  // Grace (300 ms) and the hand-back, not the heartbeat timeout (60 s).
  expect(Date.now() - stoppedAt).toBeLessThan(5_000);
  expect(worker.output()).toContain('attempt handed back at shutdown');

  const handedBack = await stack.runtime.db.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow();
  expect(handedBack).toMatchObject({ status: 'queued', attempts: 0, lease_token: null, progress_stage: 'queued' });
  expect(handedBack.checkpoint_pages).toBeGreaterThanOrEqual(1);
  const entries = await stack.runtime.queues.jobs.getJobs(['waiting', 'prioritized']);
  expect(entries.map((e) => e.data.jobId)).toContain(jobId);
  expect(await usage(ws)).toMatchObject({ credits_used: 0, credits_reserved: 400 });

  const next = stack.startWorker(2);
  const done = await eventually(
    async () => {
      const r = await stack.api.get(`/v1/jobs/${jobId}`, { headers: ws.auth });
      return ['completed', 'failed', 'cancelled'].includes(r.body.status) ? r.body : undefined;
    },
    20_000,
    50,
  );
  await next.close();
  stack.worker = null;

  // One attempt counted: the handed-back one was not.
  expect(done).toMatchObject({ status: 'completed', attempts: 1, result_count: 400, billed_credits: 400 });
  const ids = (done.result as Array<{ id: string }>).map((i) => i.id);
  expect(new Set(ids).size).toBe(400);
  const ledger = await stack.runtime.db
    .selectFrom('credit_ledger')
    .select(['entry_type', 'credits'])
    .where('job_id', '=', jobId)
    .orderBy('id')
    .execute();
  expect(ledger.map((r) => [r.entry_type, Number(r.credits)])).toEqual([
    ['reserve', -400],
    ['settle', 400],
  ]);
  expect(await usage(ws)).toMatchObject({ credits_used: 400, credits_reserved: 0, credits_remaining: 600 });
}, 60_000);

it('an attempt that finishes within the grace completes normally', async () => {
  const ws = await stack.workspace({ credits: 100 });
  const worker = stack.startWorker(2);
  const created = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'instagram', operation: 'profile', target: 'grace_sandbox_slow_400' },
  });
  const jobId = created.body.id as string;
  await eventually(
    async () =>
      (await stack.runtime.db.selectFrom('jobs').select('status').where('id', '=', jobId).executeTakeFirstOrThrow()).status === 'running',
    10_000,
    10,
  );
  await worker.close({ graceMs: 5_000 });
  stack.worker = null;
  const row = await stack.runtime.db.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow();
  expect(row).toMatchObject({ status: 'completed', attempts: 1, billed_credits: 1 });
}, 30_000);
