import { type ApiError, createJob, type CreatedJob, getUsage, ledgerTotals } from '@sdx/domain/testing';
import { countWorkspaceRows, startTestStack, type TestStack } from '@sdx/testing';

/**
 * Group admission: submissions made in the same turn of the event loop share one transaction.
 * Each must still get the answer it would get alone, in submission order, and the ledger and
 * balance must come out as if they had been admitted one by one.
 */

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack.close();
});

async function tenantOf(workspaceId: string) {
  const workspace = await stack.runtime.db.selectFrom('workspaces').selectAll().where('id', '=', workspaceId).executeTakeFirstOrThrow();
  return { workspace, keyId: null, role: null };
}

function submit(tenant: Awaited<ReturnType<typeof tenantOf>>, target: string, idempotencyKey: string | null = null) {
  return createJob(
    stack.runtime.services,
    tenant,
    { platform: 'instagram', operation: 'profile', target },
    { endpoint: 'POST /v1/jobs', idempotencyKey },
  );
}

async function usageOf(workspaceId: string) {
  const tenant = await tenantOf(workspaceId);
  return getUsage(stack.runtime.db, tenant.workspace, new Date());
}

const codeOf = (o: PromiseSettledResult<CreatedJob>) => (o.status === 'rejected' ? (o.reason as ApiError).code : 'ok');

describe('group admission', () => {
  it('answers every submission of one group as if it had been alone', async () => {
    const poor = await stack.workspace({ credits: 3 });
    const keyed = await stack.workspace({ credits: 100 });
    const capped = await stack.workspace({ credits: 100, maxActiveJobs: 2 });
    const [tp, tk, tc] = await Promise.all([tenantOf(poor.workspaceId), tenantOf(keyed.workspaceId), tenantOf(capped.workspaceId)]);

    // All in one turn of the event loop: one group.
    const outcomes = await Promise.allSettled([
      submit(tp, 'poor_a'),
      submit(tp, 'poor_b'),
      submit(tp, 'poor_a'), // the twin of the first: deduplicated, reserves nothing
      submit(tp, 'poor_c'),
      submit(tp, 'poor_d'), // a fourth credit is not there: 402
      submit(tk, 'keyed_one', 'key-1'),
      submit(tk, 'keyed_one', 'key-1'), // same key, same body: replay of the first
      submit(tk, 'keyed_two', 'key-1'), // same key, other body: 409
      submit(tc, 'capped_a'),
      submit(tc, 'capped_b'),
      submit(tc, 'capped_c'), // above max_active_jobs 2: 429
    ]);

    expect(outcomes.map(codeOf)).toEqual([
      'ok',
      'ok',
      'ok',
      'ok',
      'insufficient_credits',
      'ok',
      'ok',
      'idempotency_key_conflict',
      'ok',
      'ok',
      'concurrent_job_limit_exceeded',
    ]);
    const value = (i: number) => (outcomes[i] as PromiseFulfilledResult<CreatedJob>).value;
    expect(value(2).deduplicated).toBe(true);
    expect(value(2).job.id).toBe(value(0).job.id);
    expect(value(6).idempotentReplay).toBe(true);
    expect(value(6).job.id).toBe(value(5).job.id);
    expect((outcomes[4] as PromiseRejectedResult).reason.fields).toMatchObject({ required: 1, available: 0, reserved: 3 });
    for (const i of [0, 1, 3, 5, 8, 9]) {
      expect(value(i).job).toMatchObject({ status: 'queued', reserved_credits: 1, attempts: 0 });
      expect(value(i).enqueue).toBe(true);
    }

    expect(await countWorkspaceRows(stack, 'jobs', poor.workspaceId)).toBe(3);
    expect(await countWorkspaceRows(stack, 'credit_reservations', poor.workspaceId)).toBe(3);
    expect(await usageOf(poor.workspaceId)).toMatchObject({ credits_reserved: 3, credits_remaining: 0, credits_used: 0 });
    expect(await ledgerTotals(stack.runtime.db, poor.workspaceId)).toEqual({ reserved: 3, settled: 0, released: 0 });

    expect(await countWorkspaceRows(stack, 'jobs', keyed.workspaceId)).toBe(1);
    expect(await countWorkspaceRows(stack, 'idempotency_keys', keyed.workspaceId)).toBe(1);
    expect(await usageOf(keyed.workspaceId)).toMatchObject({ credits_reserved: 1, credits_remaining: 99 });

    expect(await countWorkspaceRows(stack, 'jobs', capped.workspaceId)).toBe(2);
    expect(await usageOf(capped.workspaceId)).toMatchObject({ credits_reserved: 2, credits_remaining: 98 });

    // The six new jobs of the group share one queue entry, which each row names.
    const fresh = [0, 1, 3, 5, 8, 9].map((i) => value(i).job);
    const entryIds = new Set(fresh.map((job) => job.queue_entry));
    expect(entryIds.size).toBe(1);
    const [entryId] = [...entryIds];
    expect(entryId).toBe(`${fresh[0].id}-a1+5`);
    await stack.runtime.queues.idle(); // the add goes on after the answer
    const entry = await stack.runtime.queues.jobs.getJob(entryId!);
    expect(entry?.data).toEqual({ jobId: fresh[0].id, attempt: 1, jobIds: fresh.map((job) => job.id) });
    expect(await stack.runtime.queues.jobs.getJob(`${fresh[1].id}-a1`)).toBeUndefined();
  });

  it('frees the idempotency key of a submission refused inside a group', async () => {
    const ws = await stack.workspace({ credits: 1 });
    const tenant = await tenantOf(ws.workspaceId);
    const outcomes = await Promise.allSettled([submit(tenant, 'first_one'), submit(tenant, 'second_one', 'retry-later')]);
    expect(outcomes.map(codeOf)).toEqual(['ok', 'insufficient_credits']);
    expect(await countWorkspaceRows(stack, 'idempotency_keys', ws.workspaceId)).toBe(0);

    // With credits, the same key is admitted as new work, not replayed.
    await ws.grant(5);
    const again = await submit(tenant, 'second_one', 'retry-later');
    expect(again.idempotentReplay).toBe(false);
    expect(again.job.status).toBe('queued');
    expect(await countWorkspaceRows(stack, 'idempotency_keys', ws.workspaceId)).toBe(1);
  });

  it('points a key answered by deduplication at the running twin', async () => {
    const ws = await stack.workspace({ credits: 10 });
    const tenant = await tenantOf(ws.workspaceId);
    const [plain, keyedTwin] = await Promise.all([submit(tenant, 'twin_target'), submit(tenant, 'twin_target', 'twin-key')]);
    expect(keyedTwin.deduplicated).toBe(true);
    expect(keyedTwin.job.id).toBe(plain.job.id);
    const replay = await submit(tenant, 'twin_target', 'twin-key');
    expect(replay.idempotentReplay).toBe(true);
    expect(replay.job.id).toBe(plain.job.id);
    expect(await countWorkspaceRows(stack, 'credit_reservations', ws.workspaceId)).toBe(1);
  });

  it('keeps the usage invariant when 200 submissions of 4 workspaces race', async () => {
    const workspaces = await Promise.all(Array.from({ length: 4 }, () => stack.workspace({ credits: 37 })));
    const tenants = await Promise.all(workspaces.map((w) => tenantOf(w.workspaceId)));
    const outcomes = await Promise.allSettled(Array.from({ length: 200 }, (_, i) => submit(tenants[i % 4], `race_${i}`)));
    for (const [n, ws] of workspaces.entries()) {
      const mine = outcomes.filter((_, i) => i % 4 === n);
      expect(mine.filter((o) => o.status === 'fulfilled')).toHaveLength(37);
      expect(mine.filter((o) => codeOf(o) === 'insufficient_credits')).toHaveLength(13);
      const usage = await usageOf(ws.workspaceId);
      expect(usage.credits_used + usage.credits_reserved + usage.credits_remaining).toBe(usage.credit_limit);
      expect(usage).toMatchObject({ credits_reserved: 37, credits_remaining: 0 });
      expect(await countWorkspaceRows(stack, 'jobs', ws.workspaceId)).toBe(37);
    }
  });
});
