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
 * Crash safety with a real worker process: a worker killed with SIGKILL in the middle of a
 * multi-page job leaves a running job whose heartbeat stops; the reconciler of another worker
 * hands it over, the new attempt resumes from the last checkpoint, and the job completes and
 * is billed exactly once.
 */

const TIMING = { HEARTBEAT_TIMEOUT_MS: '2000', HEARTBEAT_INTERVAL_MS: '200', RECONCILE_INTERVAL_MS: '500' };

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

async function ledger(jobId: string) {
  const rows = await stack.runtime.db
    .selectFrom('credit_ledger')
    .select(['entry_type', 'credits'])
    .where('job_id', '=', jobId)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ entry_type: r.entry_type, credits: Number(r.credits) }));
}

it('a worker killed with SIGKILL mid-job: the job still completes once, resumes, and is billed once', async () => {
  const ws = await stack.workspace({ credits: 1000 });
  worker = spawnWorkerProcess(stack, { JOB_RETRY_BASE_MS: '50', ...TIMING });
  const child = worker.proc;
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));

  // Three pages of 100 playlist items, 1 s each.
  const created = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'youtube', operation: 'playlist_items', target: 'PLcrash_sandbox_slow_1000', limit: 300 },
  });
  expect(created.status).toBe(202);
  const jobId = created.body.id as string;

  const midway = await eventually(
    async () => {
      const r = await stack.api.get(`/v1/jobs/${jobId}`, { headers: ws.auth });
      return r.body.status === 'running' && r.body.progress_current > 0 ? r.body : undefined;
    },
    30_000,
    25,
  ).catch((error) => {
    throw new Error(`${String(error)}\nworker output:\n${worker!.output()}`);
  });
  expect(midway).toMatchObject({ attempts: 1, progress_current: 100 });

  process.kill(-child.pid!, 'SIGKILL');
  expect(await exited).toBe('SIGKILL');

  // The dead worker's job stays running with a stale heartbeat until another worker takes it.
  const orphan = await stack.api.get(`/v1/jobs/${jobId}`, { headers: ws.auth });
  expect(orphan.body.status).toBe('running');
  expect(await usage(ws)).toMatchObject({ credits_used: 0, credits_reserved: 300 });

  const second = stack.startWorker(2);
  const done = await eventually(
    async () => {
      const r = await stack.api.get(`/v1/jobs/${jobId}`, { headers: ws.auth });
      return ['completed', 'failed', 'cancelled'].includes(r.body.status) ? r.body : undefined;
    },
    20_000,
    50,
  );

  expect(done).toMatchObject({
    status: 'completed',
    attempts: 2,
    result_count: 300,
    progress_current: 300,
    billed_units: 300,
    billed_credits: 300,
  });
  const ids = (done.result as Array<{ id: string }>).map((i) => i.id);
  expect(ids).toHaveLength(300);
  expect(new Set(ids).size).toBe(300);

  // The new attempt resumed after the checkpointed first page instead of starting over.
  const pages = await stack.runtime.db
    .selectFrom('job_result_pages')
    .select(['page_no', 'item_count'])
    .where('job_id', '=', jobId)
    .orderBy('page_no')
    .execute();
  expect(pages).toEqual([
    { page_no: 1, item_count: 100 },
    { page_no: 2, item_count: 100 },
    { page_no: 3, item_count: 100 },
  ]);

  expect(await ledger(jobId)).toEqual([
    { entry_type: 'reserve', credits: -300 },
    { entry_type: 'settle', credits: 300 },
  ]);
  expect(await usage(ws)).toMatchObject({ credits_used: 300, credits_reserved: 0, credits_remaining: 700 });

  // Late deliveries of either attempt change nothing.
  await stack.runtime.queues.enqueue({ jobId, attempt: 1, batchChild: false });
  await stack.runtime.queues.enqueue({ jobId, attempt: 3, batchChild: false });
  await new Promise((resolve) => setTimeout(resolve, 800));
  const after = await stack.api.get(`/v1/jobs/${jobId}`, { headers: ws.auth });
  expect(after.body).toMatchObject({ status: 'completed', attempts: 2, billed_credits: 300 });
  expect(await ledger(jobId)).toHaveLength(2);

  await second.close();
  stack.worker = null;
}, 60_000);
