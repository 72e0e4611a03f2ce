import { findOperation } from '@sdx/catalog';
import { chargeOf, createJob, ledgerTotals } from '@sdx/domain/testing';
import { startTestStack, type TestStack, waitForJob } from '@sdx/testing';

/**
 * A job is priced at the rates recorded on it at admission: a catalog price change between
 * admission and completion never re-prices admitted work.
 */
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack.close();
});

describe('pricing at admission rates', () => {
  it('settles a job admitted before a price change at the old rates, bundled posts included', async () => {
    const ws = await stack.workspace({ credits: 1000 });
    const workspace = await stack.runtime.db
      .selectFrom('workspaces')
      .selectAll()
      .where('id', '=', ws.workspaceId)
      .executeTakeFirstOrThrow();
    const tenant = { workspace, keyId: null, role: null };
    const profile = findOperation('instagram', 'profile')!;
    const posts = findOperation('instagram', 'posts')!;
    const before = { profile: profile.credits_per_result, posts: posts.credits_per_result };

    const { job } = await createJob(
      stack.runtime.services,
      tenant,
      { platform: 'instagram', operation: 'profile', target: 'natgeo', include_posts: 5 },
      { endpoint: 'POST /v1/jobs' },
    );
    expect(job).toMatchObject({
      credit_rate: before.profile,
      bundle_credit_rate: before.posts,
      reserved_credits: before.profile + 5 * before.posts,
    });

    // The catalog's prices change while the job waits for a worker.
    profile.credits_per_result = 0;
    posts.credits_per_result = 0;
    try {
      stack.startWorker(1);
      const done = await waitForJob(stack, ws.auth, job.id, (j) => j.status === 'completed');
      const delivered = done.result_count as number;
      expect(delivered).toBe(6);
      const expected = before.profile + 5 * before.posts;
      expect(done.billed_credits).toBe(expected);
      expect(chargeOf(job, 1, 5)).toBe(expected);
      expect(await ledgerTotals(stack.runtime.db, ws.workspaceId)).toEqual({ reserved: expected, settled: expected, released: 0 });
    } finally {
      profile.credits_per_result = before.profile;
      posts.credits_per_result = before.posts;
    }
  });

  it('never charges more than was reserved', () => {
    const rates = {
      credit_rate: 2,
      results_per_credit: 1,
      base_credits: 0,
      bundle_credit_rate: null,
      bundle_results_per_credit: null,
      bundle_base_credits: null,
    };
    expect(chargeOf({ ...rates, reserved_credits: 10 }, 3, 0)).toBe(6);
    expect(chargeOf({ ...rates, reserved_credits: 10 }, 30, 0)).toBe(10);
  });
});
