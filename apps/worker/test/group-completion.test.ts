import { startWorker, type RunningWorker } from '@sdx/app-worker';
import { createRuntime, type Runtime } from '@sdx/runtime';
import { eventually, heldSandbox, startTestStack, type SeededWorkspace, type TestStack, usageChecked } from '@sdx/testing';

/**
 * A worker running many attempts at once claims them in groups and completes them in groups
 * (one transaction per group). Through real Postgres, Redis and workers: every job completes
 * and settles exactly once and is billed what it delivered, across workspaces, when a job of a
 * group lost its lease, and when two worker processes race over duplicate queue entries.
 */

// A heartbeat far apart, so an attempt that lost its job reaches the completion (where the
// lease guard must discard it) instead of being stopped by its heartbeat first.
const TIMING = { HEARTBEAT_TIMEOUT_MS: '30000', HEARTBEAT_INTERVAL_MS: '10000', RECONCILE_INTERVAL_MS: '500' };

// Slow pages wait while a test holds them: what it does meanwhile happens while they run.
const sandbox = heldSandbox();

let stack: TestStack;
const extra: Array<{ worker: RunningWorker; runtime: Runtime }> = [];
beforeAll(async () => {
  stack = await startTestStack({ env: TIMING, providers: [sandbox.provider] });
});
afterAll(async () => {
  for (const { worker, runtime } of extra) {
    await worker.close();
    await runtime.close();
  }
  await stack.close();
});

const usage = (ws: SeededWorkspace) => usageChecked(stack, ws);

async function submit(ws: SeededWorkspace, body: Record<string, unknown>): Promise<string> {
  const res = await stack.api.post('/v1/jobs', { headers: ws.auth, body });
  expect(res.status).toBe(202);
  return res.body.id as string;
}

async function ledgerTypes(jobId: string): Promise<string[]> {
  const rows = await stack.runtime.db.selectFrom('credit_ledger').select('entry_type').where('job_id', '=', jobId).orderBy('id').execute();
  return rows.map((r) => r.entry_type);
}

async function jobsOf(ids: string[]) {
  return stack.runtime.db.selectFrom('jobs').selectAll().where('id', 'in', ids).execute();
}

async function settledAll(ids: string[], timeoutMs = 30_000) {
  return eventually(
    async () => {
      const rows = await jobsOf(ids);
      return rows.every((r) => ['completed', 'failed', 'cancelled'].includes(r.status)) ? rows : undefined;
    },
    timeoutMs,
    100,
  );
}

/** Lets every leftover queue entry run out (duplicates are skipped) before settlements are counted. */
async function queueIdle() {
  await eventually(async () => {
    const counts = await stack.runtime.queues.jobs.getJobCounts('waiting', 'prioritized', 'active', 'delayed');
    return counts.waiting === 0 && counts.prioritized === 0 && counts.active === 0 && counts.delayed === 0;
  }, 15_000);
}

describe('group completion through the worker', () => {
  it('completes 60 jobs of 3 workspaces in groups, each billed and settled once', async () => {
    const workspaces = [
      await stack.workspace({ credits: 5000 }),
      await stack.workspace({ credits: 5000 }),
      await stack.workspace({ credits: 5000 }),
    ];
    // Per-result (full and partial), empty, and a bundle: [body, billed credits].
    const kinds: Array<[Record<string, unknown>, number]> = [
      [{ operation: 'posts', target: 'full_sandbox_slow_100', limit: 10 }, 20],
      [{ operation: 'posts', target: 'part_sandbox_count_3_sandbox_slow_100', limit: 10 }, 6],
      [{ operation: 'comments', target: 'CxYz_sandbox_empty_sandbox_slow_100', limit: 20 }, 0],
      [{ operation: 'profile', target: 'bundle_sandbox_slow_100', include_posts: 4 }, 1 + 4 * 2],
    ];
    const expected = new Map<string, number>();
    const byWorkspace = new Map<SeededWorkspace, number>();
    for (let i = 0; i < 60; i++) {
      const ws = workspaces[i % 3];
      const [body, billed] = kinds[i % kinds.length];
      const id = await submit(ws, { ...body, target: `g${i}_${body.target as string}` });
      expected.set(id, billed);
      byWorkspace.set(ws, (byWorkspace.get(ws) ?? 0) + billed);
    }
    const ids = [...expected.keys()];

    stack.startWorker(32);
    const rows = await settledAll(ids);
    for (const row of rows) {
      expect(row).toMatchObject({ status: 'completed', attempts: 1, billed_credits: expected.get(row.id), lease_token: null });
    }
    // Jobs completed by one group share its moment: groups did form.
    const moments = new Set(rows.map((r) => r.finished_at!.getTime()));
    expect(moments.size).toBeLessThan(rows.length);

    await queueIdle();
    for (const id of ids) expect(await ledgerTypes(id)).toEqual(['reserve', 'settle']);
    const settled = await stack.runtime.db
      .selectFrom('credit_reservations')
      .select(['job_id', 'status', 'settled_credits'])
      .where('job_id', 'in', ids)
      .execute();
    for (const r of settled) expect(r).toMatchObject({ status: 'settled', settled_credits: expected.get(r.job_id) });
    for (const ws of workspaces) {
      expect(await usage(ws)).toMatchObject({
        credits_used: byWorkspace.get(ws),
        credits_reserved: 0,
        credits_remaining: 5000 - byWorkspace.get(ws)!,
      });
    }
  }, 60_000);

  it('a job of the group that lost its lease is not billed; the others are', async () => {
    const ws = await stack.workspace({ credits: 1000 });
    const ids: string[] = [];
    const letGo = sandbox.hold();
    for (let i = 0; i < 10; i++) ids.push(await submit(ws, { operation: 'posts', target: `lease${i}_sandbox_slow_100`, limit: 10 }));
    if (!stack.worker) stack.startWorker(32);
    await eventually(async () => (await jobsOf(ids)).every((r) => r.status === 'running'), 15_000, 50);

    // While the attempts wait on the provider: two jobs are cancelled, one is taken over by
    // another attempt (its lease replaced).
    const [cancelA, cancelB, takenOver] = [ids[1], ids[4], ids[7]];
    for (const id of [cancelA, cancelB]) {
      const res = await stack.api.post(`/v1/jobs/${id}/cancel`, { headers: ws.auth });
      expect(res.body).toMatchObject({ status: 'cancelled' });
    }
    await stack.runtime.db.updateTable('jobs').set({ lease_token: 'another-attempt' }).where('id', '=', takenOver).execute();
    letGo();

    const rest = ids.filter((id) => ![cancelA, cancelB, takenOver].includes(id));
    const done = await settledAll(rest);
    for (const row of done) expect(row).toMatchObject({ status: 'completed', billed_credits: 20, result_count: 10 });
    await queueIdle();

    const [a, b, t] = await Promise.all([jobsOf([cancelA]), jobsOf([cancelB]), jobsOf([takenOver])]);
    expect(a[0]).toMatchObject({ status: 'cancelled', billed_credits: 0, result_count: null });
    expect(b[0]).toMatchObject({ status: 'cancelled', billed_credits: 0, result_count: null });
    expect(t[0]).toMatchObject({ status: 'running', lease_token: 'another-attempt', billed_credits: 0, result_count: null });
    expect(await ledgerTypes(cancelA)).toEqual(['reserve', 'release']);
    expect(await ledgerTypes(cancelB)).toEqual(['reserve', 'release']);
    expect(await ledgerTypes(takenOver)).toEqual(['reserve']);
    for (const id of rest) expect(await ledgerTypes(id)).toEqual(['reserve', 'settle']);
    const pages = await stack.runtime.db
      .selectFrom('job_result_pages')
      .select('job_id')
      .where('job_id', 'in', [cancelA, cancelB, takenOver])
      .execute();
    expect(pages).toEqual([]);
    // The taken-over job's reservation stays held for the attempt that owns it now.
    expect(await usage(ws)).toMatchObject({ credits_used: 7 * 20, credits_reserved: 20, credits_remaining: 1000 - 7 * 20 - 20 });
  }, 60_000);

  it('two worker processes racing over duplicate entries complete and settle each job once', async () => {
    const workspaces = [await stack.workspace({ credits: 5000 }), await stack.workspace({ credits: 5000 })];
    const ids: string[] = [];
    const owner = new Map<string, SeededWorkspace>();
    for (let i = 0; i < 30; i++) {
      const ws = workspaces[i % 2];
      const id = await submit(ws, { operation: 'posts', target: `dup${i}_sandbox_slow_50`, limit: 10 });
      ids.push(id);
      owner.set(id, ws);
    }
    // A later attempt's entry for every job: two deliveries each, for whichever worker is free.
    for (const jobId of ids) await stack.runtime.queues.enqueue({ jobId, attempt: 2, batchChild: false });

    // A second process: its own Services, so its own claim and completion groups.
    if (!stack.worker) stack.startWorker(32);
    const runtime = createRuntime(stack.config, { name: 'second-worker', dbPoolSize: 10 });
    const worker = startWorker({
      services: runtime.services,
      providers: runtime.registry,
      redisUrl: stack.config.redisUrl,
      concurrency: 32,
    });
    extra.push({ worker, runtime });

    const rows = await settledAll(ids);
    for (const row of rows) expect(row).toMatchObject({ status: 'completed', attempts: 1, billed_credits: 20, result_count: 10 });
    await queueIdle();
    for (const id of ids) expect(await ledgerTypes(id)).toEqual(['reserve', 'settle']);
    for (const ws of workspaces) {
      const billed = ids.filter((id) => owner.get(id) === ws).length * 20;
      expect(await usage(ws)).toMatchObject({ credits_used: billed, credits_reserved: 0, credits_remaining: 5000 - billed });
    }
  }, 60_000);
});
