import { createJob, reconcileJobs } from '@sdx/domain/testing';
import { dataEpochKey, jobIdsOf } from '@sdx/queue';
import { eventually, startTestStack, type SeededWorkspace, type TestStack } from '@sdx/testing';

/**
 * Jobs admitted together share queue entries: the worker still runs at most WORKER_CONCURRENCY
 * attempts at once, hands what it cannot start back to the queue, and every job runs, completes
 * and settles once. The reconciler re-adds the jobs of a lost shared entry, each in its own.
 */

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack.close();
});

async function tenantOf(ws: SeededWorkspace) {
  const workspace = await stack.runtime.db.selectFrom('workspaces').selectAll().where('id', '=', ws.workspaceId).executeTakeFirstOrThrow();
  return { workspace, keyId: null, role: null };
}

/** Submits the targets in one turn of the event loop: one admission group. */
async function submitTogether(ws: SeededWorkspace, targets: string[]) {
  const tenant = await tenantOf(ws);
  const created = await Promise.all(
    targets.map((target) =>
      createJob(stack.runtime.services, tenant, { platform: 'instagram', operation: 'profile', target }, { endpoint: 'POST /v1/jobs' }),
    ),
  );
  // Submissions are answered once committed; their queue add goes on behind.
  await stack.runtime.queues.idle();
  return created.map((c) => c.job);
}

async function jobsOf(ids: string[]) {
  return stack.runtime.db.selectFrom('jobs').selectAll().where('id', 'in', ids).orderBy('id').execute();
}

async function ledgerTypes(jobId: string): Promise<string[]> {
  const rows = await stack.runtime.db.selectFrom('credit_ledger').select('entry_type').where('job_id', '=', jobId).orderBy('id').execute();
  return rows.map((r) => r.entry_type);
}

/** Entries waiting to be taken (with priorities, BullMQ keeps them as prioritized). */
async function waitingEntries() {
  return stack.runtime.queues.jobs.getJobs(['waiting', 'prioritized']);
}

describe('shared queue entries', () => {
  it('runs at most WORKER_CONCURRENCY attempts of a shared entry at once and hands the rest back', async () => {
    const ws = await stack.workspace({ credits: 100 });
    const targets = Array.from({ length: 5 }, (_, i) => `shared${i}_sandbox_slow_300`);
    targets.push('shared_flaky_sandbox_flaky_1_sandbox_slow_300');
    const jobs = await submitTogether(ws, targets);
    const ids = jobs.map((j) => j.id);

    const entries = await waitingEntries();
    expect(entries).toHaveLength(1);
    expect(entries[0].id).toBe(`${ids[0]}-a1+5`);
    expect(jobIdsOf(entries[0].data)).toEqual(ids);

    // One worker with two slots: the entry's other four jobs can only run through the entries
    // it hands back.
    const worker = stack.startWorker(2);
    const done = await eventually(
      async () => {
        const rows = await jobsOf(ids);
        return rows.every((r) => r.status === 'completed') ? rows : undefined;
      },
      30_000,
      20,
    );
    await worker.close();
    stack.worker = null;

    // Each extraction takes at least 300 ms. A job's row stays running for the few milliseconds
    // of its completion commit after its slot is free again, so 50 ms are left out at the end.
    const spans = done
      .filter((j) => !j.target.includes('flaky'))
      .map((j) => [j.started_at!.getTime(), j.finished_at!.getTime() - 50] as const);
    const mostAtOnce = Math.max(...spans.map(([at]) => spans.filter(([from, to]) => from <= at && at < to).length));
    expect(mostAtOnce).toBe(2);
    for (const job of done) {
      expect(job).toMatchObject({ status: 'completed', result_count: 1, billed_credits: 1, progress_message: 'Completed with 1 result' });
      expect(job.attempts).toBe(job.target.includes('flaky') ? 2 : 1);
      expect(await ledgerTypes(job.id)).toEqual(['reserve', 'settle']);
    }
    expect(await stack.runtime.queues.jobs.getJobCounts('waiting', 'prioritized', 'active', 'delayed')).toEqual({
      waiting: 0,
      prioritized: 0,
      active: 0,
      delayed: 0,
    });
  }, 40_000);

  it('refills each slot as it frees, whatever entry its attempt came in', async () => {
    const ws = await stack.workspace({ credits: 100 });
    const [slow, fast] = await submitTogether(ws, ['refill_slow_sandbox_slow_1500', 'refill_fast_sandbox_slow_100']);
    const [later] = await submitTogether(ws, ['refill_later_sandbox_slow_100']);
    const worker = stack.startWorker(2);
    const done = await eventually(async () => {
      const rows = await jobsOf([slow.id, fast.id, later.id]);
      return rows.every((r) => r.status === 'completed') ? new Map(rows.map((r) => [r.id, r])) : undefined;
    }, 20_000);
    await worker.close();
    stack.worker = null;
    // The later job took the fast one's slot while the slow one of the same entry still ran.
    expect(done.get(later.id)!.finished_at!.getTime()).toBeLessThan(done.get(slow.id)!.finished_at!.getTime());
  }, 40_000);

  it('holds at most one entry per queue that it cannot start', async () => {
    const ws = await stack.workspace({ credits: 100 });
    const pair = await submitTogether(ws, ['busy_a_sandbox_slow_1000', 'busy_b_sandbox_slow_1000']);
    const others = [];
    for (const target of ['busy_c', 'busy_d', 'busy_e']) others.push(...(await submitTogether(ws, [target])));
    const worker = stack.startWorker(2);
    await eventually(async () => (await jobsOf(pair.map((j) => j.id))).every((r) => r.status === 'running'), 10_000, 20);
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Both slots run the pair: one entry waits here for a slot, the others stay in the queue for
    // any other worker, and none of their jobs has started.
    const counts = await stack.runtime.queues.jobs.getJobCounts('waiting', 'prioritized', 'active');
    expect({ waiting: counts.waiting + counts.prioritized, active: counts.active }).toEqual({ waiting: 2, active: 1 });
    expect((await jobsOf(others.map((j) => j.id))).map((r) => r.status)).toEqual(['queued', 'queued', 'queued']);

    const ids = [...pair, ...others].map((j) => j.id);
    const done = await eventually(async () => {
      const rows = await jobsOf(ids);
      return rows.every((r) => r.status === 'completed') ? rows : undefined;
    }, 20_000);
    await worker.close();
    stack.worker = null;
    expect(done.map((r) => r.billed_credits)).toEqual([1, 1, 1, 1, 1]);
  }, 40_000);

  it('re-adds the jobs of a lost shared entry still queued, each once, in entries of their own', async () => {
    const ws = await stack.workspace({ credits: 100 });
    const jobs = await submitTogether(ws, ['lost_a', 'lost_b', 'lost_c', 'lost_d']);
    const ids = jobs.map((j) => j.id);
    const entryId = `${ids[0]}-a1+3`;
    expect(new Set(jobs.map((j) => j.queue_entry))).toEqual(new Set([entryId]));

    // While the entry waits, the reconciler adds nothing.
    await reconcileJobs(stack.runtime.services, { enqueueGraceMs: 0 });
    expect((await waitingEntries()).map((e) => e.id)).toEqual([entryId]);

    // Lost (Redis flushed, say: the entry and the data epoch with it); one of the jobs is cancelled meanwhile.
    await stack.runtime.queues.jobs.remove(entryId);
    await stack.runtime.redis.del(dataEpochKey(stack.config.redisPrefix, stack.config.deploymentId));
    const cancelled = await stack.api.post(`/v1/jobs/${ids[1]}/cancel`, { headers: ws.auth });
    expect(cancelled.body.status).toBe('cancelled');
    expect(await waitingEntries()).toHaveLength(0);

    await reconcileJobs(stack.runtime.services, { enqueueGraceMs: 0 });
    await reconcileJobs(stack.runtime.services, { enqueueGraceMs: 0 });
    const again = await waitingEntries();
    expect(again.map((e) => e.id).sort()).toEqual([ids[0], ids[2], ids[3]].map((id) => `${id}-a1`).sort());
    expect(again.map((e) => jobIdsOf(e.data))).toEqual(expect.arrayContaining([[ids[0]], [ids[2]], [ids[3]]]));
    expect(again.map((e) => e.data.attempt)).toEqual([1, 1, 1]);

    const worker = stack.startWorker(4);
    const done = await eventually(async () => {
      const rows = await jobsOf(ids);
      return rows.every((r) => r.status === 'completed' || r.status === 'cancelled') ? rows : undefined;
    }, 20_000);
    await worker.close();
    stack.worker = null;
    expect(done.map((r) => r.status).sort()).toEqual(['cancelled', 'completed', 'completed', 'completed']);
    for (const job of done.filter((r) => r.status === 'completed')) {
      expect(job).toMatchObject({ attempts: 1, billed_credits: 1 });
      expect(await ledgerTypes(job.id)).toEqual(['reserve', 'settle']);
    }
  }, 40_000);
});
