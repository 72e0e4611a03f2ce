import type { RunningWorker } from '@sdx/app-worker';
import { eventually, startTestStack, type SeededWorkspace, type TestStack, usageChecked, type LooseJson } from '@sdx/testing';

/**
 * Exactly-once settlement when queue entries are duplicated and workers race, and the
 * reconciler that re-enqueues jobs queued in Postgres but missing from Redis.
 */

const TIMING = { HEARTBEAT_TIMEOUT_MS: '2000', HEARTBEAT_INTERVAL_MS: '200', RECONCILE_INTERVAL_MS: '500' };

const usage = (stack: TestStack, ws: SeededWorkspace) => usageChecked(stack, ws);

async function ledgerTypes(stack: TestStack, jobId: string) {
  const rows = await stack.runtime.db.selectFrom('credit_ledger').select('entry_type').where('job_id', '=', jobId).orderBy('id').execute();
  return rows.map((r) => r.entry_type);
}

async function waitTerminal(stack: TestStack, ws: SeededWorkspace, jobId: string, timeoutMs = 20_000) {
  return eventually(
    async () => {
      const r = await stack.api.get(`/v1/jobs/${jobId}`, { headers: ws.auth });
      return ['completed', 'failed', 'cancelled'].includes(r.body.status) ? (r.body as Record<string, LooseJson>) : undefined;
    },
    timeoutMs,
    50,
  );
}

describe('two workers racing over duplicate queue entries', () => {
  let stack: TestStack;
  const workers: RunningWorker[] = [];
  beforeAll(async () => {
    stack = await startTestStack({ env: TIMING });
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.close()));
    stack.worker = null;
    await stack.close();
  });

  it('each job is claimed once, completes once and settles once', async () => {
    const ws = await stack.workspace({ credits: 10_000 });
    const jobs: string[] = [];
    for (let i = 0; i < 6; i++) {
      // Two pages of 100 videos, 300 ms each.
      const res = await stack.api.post('/v1/jobs', {
        headers: ws.auth,
        body: { platform: 'tiktok', operation: 'posts', target: `racer${i}_sandbox_slow_300`, limit: 200 },
      });
      expect(res.status).toBe(202);
      jobs.push(res.body.id);
    }
    // The same attempt again (a no-op by entry ID), a later attempt and a far-off one: three
    // deliveries per job that all try to claim it.
    for (const jobId of jobs) {
      await stack.runtime.queues.enqueue({ jobId, attempt: 1, batchChild: false });
      await stack.runtime.queues.enqueue({ jobId, attempt: 2, batchChild: false });
      await stack.runtime.queues.enqueue({ jobId, attempt: 7, batchChild: false });
    }
    const counts = await stack.runtime.queues.jobs.getJobCounts('waiting', 'prioritized');
    expect(counts.waiting + counts.prioritized).toBe(jobs.length * 3);

    workers.push(stack.startWorker(8), stack.startWorker(8));

    const done = await Promise.all(jobs.map((id) => waitTerminal(stack, ws, id)));
    for (const job of done) {
      expect(job).toMatchObject({ status: 'completed', attempts: 1, result_count: 200, billed_credits: 400 });
      const ids = (job.result as Array<{ id: string }>).map((i) => i.id);
      expect(new Set(ids).size).toBe(200);
    }
    // Let every leftover delivery run out before counting settlements.
    await eventually(async () => {
      const left = await stack.runtime.queues.jobs.getJobCounts('waiting', 'prioritized');
      return left.waiting === 0 && left.prioritized === 0;
    }, 10_000);
    await eventually(async () => (await stack.runtime.queues.jobs.getActiveCount()) === 0, 10_000);
    for (const id of jobs) expect(await ledgerTypes(stack, id)).toEqual(['reserve', 'settle']);
    const again = await Promise.all(jobs.map((id) => stack.api.get(`/v1/jobs/${id}`, { headers: ws.auth })));
    for (const r of again) expect(r.body).toMatchObject({ status: 'completed', attempts: 1, billed_credits: 400 });
    expect(await usage(stack, ws)).toMatchObject({ credits_used: 400 * jobs.length, credits_reserved: 0 });
  }, 40_000);
});

describe('reconciler', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack({ env: TIMING });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('re-enqueues lost entries and takes over jobs whose heartbeat stopped', async () => {
    const ws = await stack.workspace({ credits: 100 });
    const submit = async (target: string) => {
      const res = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'posts', target, limit: 10 } });
      expect(res.status).toBe(202);
      return res.body as { id: string; max_attempts: number };
    };
    // No worker runs yet. Three jobs that the queue alone would never finish:
    // 1. queued in Postgres, its entry lost from Redis;
    const lost = await submit('lost_entry');
    // 2. claimed by a worker that died: running, attempt 1, heartbeat long stale;
    const abandoned = await submit('abandoned');
    // 3. the same, on its last attempt.
    const exhausted = await submit('last_chance');
    const staleAt = new Date(Date.now() - 60_000);
    await stack.runtime.db
      .updateTable('jobs')
      .set({ status: 'running', attempts: 1, lease_token: 'dead-worker', started_at: staleAt, heartbeat_at: staleAt })
      .where('id', '=', abandoned.id)
      .execute();
    await stack.runtime.db
      .updateTable('jobs')
      .set({ status: 'running', attempts: exhausted.max_attempts, lease_token: 'dead-worker', started_at: staleAt, heartbeat_at: staleAt })
      .where('id', '=', exhausted.id)
      .execute();
    await stack.runtime.queues.jobs.obliterate({ force: true });
    expect(await stack.runtime.queues.jobs.getJobCounts('waiting', 'prioritized', 'active', 'delayed')).toEqual({
      waiting: 0,
      prioritized: 0,
      active: 0,
      delayed: 0,
    });
    expect(await usage(stack, ws)).toMatchObject({ credits_reserved: 60, credits_remaining: 40 });

    stack.startWorker(2);

    const lostDone = await waitTerminal(stack, ws, lost.id);
    expect(lostDone).toMatchObject({ status: 'completed', attempts: 1, result_count: 10, billed_credits: 20 });
    expect(await ledgerTypes(stack, lost.id)).toEqual(['reserve', 'settle']);

    const abandonedDone = await waitTerminal(stack, ws, abandoned.id);
    expect(abandonedDone).toMatchObject({ status: 'completed', attempts: 2, result_count: 10, billed_credits: 20 });
    expect(await ledgerTypes(stack, abandoned.id)).toEqual(['reserve', 'settle']);

    const exhaustedDone = await waitTerminal(stack, ws, exhausted.id);
    expect(exhaustedDone).toMatchObject({
      status: 'failed',
      attempts: exhausted.max_attempts,
      max_attempts: exhausted.max_attempts,
      billed_credits: 0,
      result: null,
    });
    expect(exhaustedDone.error).toMatchObject({ code: 'retries_exhausted', retryable: false });
    expect(await ledgerTypes(stack, exhausted.id)).toEqual(['reserve', 'release']);

    expect(await usage(stack, ws)).toMatchObject({ credits_used: 40, credits_reserved: 0, credits_remaining: 60 });
  });
});
