import { ApiError, getUsage, ledgerTotals, releaseReservation } from '@sdx/domain/testing';
import { startTestStack, type TestStack, reserveForTest, settleReservation } from '@sdx/testing';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack.close();
});

const reserve = (workspaceId: string, credits: number) => reserveForTest(stack, workspaceId, credits);

async function usage(workspaceId: string) {
  const db = stack.runtime.db;
  const workspace = await db.selectFrom('workspaces').selectAll().where('id', '=', workspaceId).executeTakeFirstOrThrow();
  return getUsage(db, workspace, new Date());
}

describe('credit ledger', () => {
  it('never over-reserves under concurrent calls and keeps the invariant', async () => {
    const ws = await stack.workspace({ credits: 100 });
    const outcomes = await Promise.allSettled(Array.from({ length: 30 }, () => reserve(ws.workspaceId, 7)));
    const accepted = outcomes.filter((o) => o.status === 'fulfilled');
    const rejected = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(accepted).toHaveLength(14); // 14 * 7 = 98 <= 100 < 105
    for (const r of rejected) {
      expect(r.reason).toBeInstanceOf(ApiError);
      expect(r.reason.code).toBe('insufficient_credits');
      expect(r.reason.fields).toMatchObject({ required: 7 });
    }
    const u = await usage(ws.workspaceId);
    expect(u.credits_reserved).toBe(98);
    expect(u.credits_used + u.credits_reserved + u.credits_remaining).toBe(u.credit_limit);
  });

  it('settles and releases each reservation exactly once, even when raced', async () => {
    const ws = await stack.workspace({ credits: 100 });
    const a = await reserve(ws.workspaceId, 40);
    const b = await reserve(ws.workspaceId, 30);
    const db = stack.runtime.db;
    const now = new Date();
    const settles = await Promise.all(
      Array.from({ length: 8 }, () => db.transaction().execute((tx) => settleReservation(tx, now, { jobId: a, credits: 25, units: 25 }))),
    );
    expect(settles.filter((s) => s !== null)).toEqual([25]);
    const releases = await Promise.all(
      Array.from({ length: 8 }, () => db.transaction().execute((tx) => releaseReservation(tx, now, b, 'test'))),
    );
    expect(releases.filter(Boolean)).toHaveLength(1);
    // A settled reservation cannot be released afterwards, nor the other way round.
    expect(await db.transaction().execute((tx) => releaseReservation(tx, now, a, 'late'))).toBe(false);
    expect(await db.transaction().execute((tx) => settleReservation(tx, now, { jobId: b, credits: 5, units: 5 }))).toBeNull();

    const u = await usage(ws.workspaceId);
    expect(u).toMatchObject({ credits_used: 25, credits_reserved: 0, credits_remaining: 75, units_used: 25, lifetime_spent: 25 });
    expect(u.credits_used + u.credits_reserved + u.credits_remaining).toBe(u.credit_limit);
    expect(await ledgerTotals(db, ws.workspaceId)).toEqual({ reserved: 70, settled: 25, released: 30 });
  });

  it('draws from the plan first, then promotional, then purchased', async () => {
    const ws = await stack.workspace({ credits: 10 });
    await ws.grant(5, 'promotional', new Date(Date.now() + 3_600_000));
    await ws.grant(20, 'purchased');
    const job = await reserve(ws.workspaceId, 30);
    const res = await stack.runtime.db.selectFrom('credit_reservations').selectAll().where('job_id', '=', job).executeTakeFirstOrThrow();
    expect([res.plan_amount, res.promo_amount, res.purchased_amount]).toEqual([10, 5, 15]);
    await stack.runtime.db.transaction().execute((tx) => settleReservation(tx, new Date(), { jobId: job, credits: 12, units: 12 }));
    const u = await usage(ws.workspaceId);
    expect(u).toMatchObject({
      credits_used: 12,
      credits_reserved: 0,
      promotional_credits: 3,
      purchased_credits: 20,
      credits_remaining: 23,
      lifetime_purchased: 20,
    });
  });

  it('ignores expired promotional credits', async () => {
    const ws = await stack.workspace({ credits: 10 });
    await ws.grant(50, 'promotional', new Date(Date.now() - 1000));
    const u = await usage(ws.workspaceId);
    expect(u.promotional_credits).toBe(0);
    expect(u.credits_remaining).toBe(10);
    await expect(reserve(ws.workspaceId, 11)).rejects.toMatchObject({ code: 'insufficient_credits' });
  });
});
