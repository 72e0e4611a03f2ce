import type { JobRow } from '@sdx/db';
import { claimJobs, type Completion, completeJobs, getUsage } from '@sdx/domain/testing';
import type { Item } from '@sdx/providers';
import { startTestStack, type SeededWorkspace, type TestStack, reserveForTest, settleReservation, settleReservations } from '@sdx/testing';

/**
 * Group completion: the claims of concurrent attempts share one statement, their completions
 * one transaction. Each job must come out exactly as the one-job path left it: completed only
 * by the attempt holding its lease, settled once, billed as delivered, the ledger and balance
 * as if the settlements had been made one by one.
 */

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack.close();
});

async function submit(ws: SeededWorkspace, target: string, limit: number): Promise<string> {
  const res = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'posts', target, limit } });
  expect(res.status).toBe(202);
  return res.body.id as string;
}

async function claimAll(ids: string[]): Promise<JobRow[]> {
  const rows = await claimJobs(stack.runtime.services, ids);
  return rows.map((row, i) => {
    if (!row || row instanceof Error) throw new Error(`job ${ids[i]} was not claimed`);
    return row;
  });
}

function delivered(job: JobRow, total: number, lease = job.lease_token!): Completion {
  const items = Array.from({ length: total }, (_, i) => ({ kind: 'post', id: `${job.id}-${i}` }) as unknown as Item);
  return { job, lease, delivered: { total, primary: total, bundled: 0, finalPage: { pageNo: 1, items } } };
}

/** Usage, checking that used + reserved + remaining is the plan plus the credits granted on top of it. */
async function usage(ws: SeededWorkspace, granted = 0) {
  const workspace = await stack.runtime.db.selectFrom('workspaces').selectAll().where('id', '=', ws.workspaceId).executeTakeFirstOrThrow();
  const u = await getUsage(stack.runtime.db, workspace, new Date());
  expect(u.credits_used + u.credits_reserved + u.credits_remaining).toBe(u.credit_limit + granted);
  return u;
}

async function job(id: string) {
  return stack.runtime.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

async function settles(jobId: string) {
  return stack.runtime.db
    .selectFrom('credit_ledger')
    .select(['credits', 'plan_credits', 'promo_credits', 'purchased_credits', 'units', 'note'])
    .where('job_id', '=', jobId)
    .where('entry_type', '=', 'settle')
    .execute();
}

async function reservation(jobId: string) {
  return stack.runtime.db.selectFrom('credit_reservations').selectAll().where('job_id', '=', jobId).executeTakeFirstOrThrow();
}

describe('group claim', () => {
  it('claims each job of the group once, with a lease of its own', async () => {
    const ws = await stack.workspace({ credits: 1000 });
    const [a, b, c] = [await submit(ws, 'claim_a', 5), await submit(ws, 'claim_b', 5), await submit(ws, 'claim_c', 5)];
    const rows = await claimJobs(stack.runtime.services, [a, b, a, c, 'job_missing']);
    expect(rows.map((r) => (r && !(r instanceof Error) ? r.id : r))).toEqual([a, b, null, c, null]);
    const claimed = rows.filter((r): r is JobRow => !!r && !(r instanceof Error));
    for (const row of claimed) expect(row).toMatchObject({ status: 'running', attempts: 1, progress_stage: 'running' });
    expect(new Set(claimed.map((r) => r.lease_token)).size).toBe(3);
    expect(claimed.every((r) => typeof r.lease_token === 'string' && r.lease_token.length > 0)).toBe(true);
    // Running with a live heartbeat: not claimable again.
    expect(await claimJobs(stack.runtime.services, [a, c])).toEqual([null, null]);
  });
});

describe('group completion', () => {
  it('completes only the jobs whose attempt holds the lease and settles each once', async () => {
    const one = await stack.workspace({ credits: 1000 });
    // Plan 30, promotional 50, purchased 100: the reservations below spread over all three.
    const two = await stack.workspace({ credits: 30 });
    await two.grant(50, 'promotional', new Date(Date.now() + 3_600_000));
    await two.grant(100, 'purchased');

    const full = await submit(one, 'g_full', 10); // reserves 20, delivers 10: 20
    const partial = await submit(one, 'g_partial', 10); // reserves 20, delivers 3: 6
    const cancelled = await submit(one, 'g_cancelled', 10);
    const planPromo = await submit(two, 'g_plan_promo', 20); // plan 30 + promo 10
    const promo = await submit(two, 'g_promo', 20); // promo 40, delivers 5: 10
    const purchased = await submit(two, 'g_purchased', 20); // purchased 40
    const takenOver = await submit(two, 'g_taken_over', 20); // purchased 40, still held after
    const over = await submit(one, 'g_over', 5); // reserves 10, reports 8 results: capped at 10
    const ids = [full, partial, cancelled, planPromo, promo, purchased, takenOver, over];
    const jobs = await claimAll(ids);

    const cancel = await stack.api.post(`/v1/jobs/${cancelled}/cancel`, { headers: one.auth });
    expect(cancel.body).toMatchObject({ status: 'cancelled' });
    await stack.runtime.db.updateTable('jobs').set({ lease_token: 'another-attempt' }).where('id', '=', takenOver).execute();

    const group = [
      delivered(jobs[0], 10),
      delivered(jobs[1], 3),
      delivered(jobs[2], 10),
      delivered(jobs[3], 20),
      delivered(jobs[4], 5),
      delivered(jobs[5], 20),
      delivered(jobs[6], 20),
      delivered(jobs[7], 8),
    ];
    expect(await completeJobs(stack.runtime.services, group)).toEqual([true, true, false, true, true, true, false, true]);

    const rows = await Promise.all(ids.map(job));
    const expected: Array<[number, number]> = [
      [10, 20],
      [3, 6],
      [-1, 0],
      [20, 40],
      [5, 10],
      [20, 40],
      [-1, 0],
      [8, 10],
    ];
    rows.forEach((row, i) => {
      const [count, billed] = expected[i];
      if (count < 0) return;
      expect(row).toMatchObject({
        status: 'completed',
        result_count: count,
        billed_units: count,
        billed_credits: billed,
        lease_token: null,
        progress_current: count,
      });
      expect(row.finished_at).not.toBeNull();
    });
    // One group, one moment.
    expect(new Set(rows.filter((r) => r.status === 'completed').map((r) => r.finished_at!.getTime())).size).toBe(1);
    expect(rows[2]).toMatchObject({ status: 'cancelled', billed_credits: 0 });
    expect(rows[6]).toMatchObject({ status: 'running', lease_token: 'another-attempt', billed_credits: 0, result_count: null });

    const pages = await stack.runtime.db
      .selectFrom('job_result_pages')
      .select(['job_id', 'item_count'])
      .where('job_id', 'in', ids)
      .execute();
    expect(new Map(pages.map((p) => [p.job_id, p.item_count]))).toEqual(
      new Map([
        [full, 10],
        [partial, 3],
        [planPromo, 20],
        [promo, 5],
        [purchased, 20],
        [over, 8],
      ]),
    );

    expect(await settles(full)).toEqual([{ credits: 20, plan_credits: 20, promo_credits: 0, purchased_credits: 0, units: 10, note: null }]);
    expect(await settles(partial)).toEqual([
      { credits: 6, plan_credits: 6, promo_credits: 0, purchased_credits: 0, units: 3, note: 'released 14 unused credits' },
    ]);
    expect(await settles(planPromo)).toEqual([
      { credits: 40, plan_credits: 30, promo_credits: 10, purchased_credits: 0, units: 20, note: null },
    ]);
    expect(await settles(promo)).toEqual([
      { credits: 10, plan_credits: 0, promo_credits: 10, purchased_credits: 0, units: 5, note: 'released 30 unused credits' },
    ]);
    expect(await settles(purchased)).toEqual([
      { credits: 40, plan_credits: 0, promo_credits: 0, purchased_credits: 40, units: 20, note: null },
    ]);
    expect(await settles(over)).toEqual([{ credits: 10, plan_credits: 10, promo_credits: 0, purchased_credits: 0, units: 8, note: null }]);
    expect(await settles(cancelled)).toEqual([]);
    expect(await settles(takenOver)).toEqual([]);
    expect(await reservation(cancelled)).toMatchObject({ status: 'released' });
    expect(await reservation(takenOver)).toMatchObject({ status: 'held', settled_credits: null });
    expect(await reservation(over)).toMatchObject({ status: 'settled', settled_credits: 10 });

    expect(await usage(one)).toMatchObject({
      credits_used: 36,
      credits_reserved: 0,
      credits_remaining: 964,
      units_used: 21,
      lifetime_spent: 36,
    });
    expect(await usage(two, 150)).toMatchObject({
      credits_used: 90,
      credits_reserved: 40,
      promotional_credits: 30,
      purchased_credits: 60,
      lifetime_spent: 90,
    });
    const balance = await stack.runtime.db
      .selectFrom('credit_balances')
      .selectAll()
      .where('workspace_id', '=', two.workspaceId)
      .executeTakeFirstOrThrow();
    expect(balance).toMatchObject({
      plan_used: 30,
      plan_reserved: 0,
      promo_reserved: 0,
      purchased_reserved: 40,
      units_reserved: 20,
      units_used: 45,
    });

    // The same group again (a duplicate delivery): nothing is owned, nothing is billed twice.
    expect(await completeJobs(stack.runtime.services, group)).toEqual(group.map(() => false));
    for (const id of [full, partial, planPromo, promo, purchased, over]) expect(await settles(id)).toHaveLength(1);
    expect(await usage(one)).toMatchObject({ credits_used: 36, credits_reserved: 0 });
    expect(await usage(two, 150)).toMatchObject({ credits_used: 90, credits_reserved: 40 });
  });

  it('completes an owned job whose reservation was already closed without billing it again', async () => {
    const ws = await stack.workspace({ credits: 100 });
    const id = await submit(ws, 'g_closed', 10);
    const [row] = await claimAll([id]);
    await stack.runtime.db.transaction().execute((tx) => settleReservation(tx, new Date(), { jobId: id, credits: 4, units: 2 }));
    expect(await completeJobs(stack.runtime.services, [delivered(row, 10)])).toEqual([true]);
    expect(await job(id)).toMatchObject({ status: 'completed', billed_credits: 20, result_count: 10 });
    expect(await settles(id)).toHaveLength(1);
    expect(await usage(ws)).toMatchObject({ credits_used: 4, credits_reserved: 0 });
  });

  it('a job whose result Postgres refuses fails alone; the rest of its group completes', async () => {
    const ws = await stack.workspace({ credits: 100 });
    const ids = [await submit(ws, 'g_ok_1', 5), await submit(ws, 'g_bad', 5), await submit(ws, 'g_ok_2', 5)];
    const [ok1, bad, ok2] = await claimAll(ids);
    const refused = delivered(bad, 5);
    // jsonb cannot store a NUL character.
    refused.delivered.finalPage!.items[0] = { kind: 'post', id: 'nul', caption: 'a\u0000b' } as unknown as Item;
    const results = await completeJobs(stack.runtime.services, [delivered(ok1, 5), refused, delivered(ok2, 5)]);
    expect(results[0]).toBe(true);
    expect(results[1]).toBeInstanceOf(Error);
    expect(results[2]).toBe(true);
    expect(await job(ids[1])).toMatchObject({ status: 'running', billed_credits: 0 });
    expect(await reservation(ids[1])).toMatchObject({ status: 'held' });
    expect(await settles(ids[1])).toEqual([]);
    for (const id of [ids[0], ids[2]]) {
      expect(await job(id)).toMatchObject({ status: 'completed', billed_credits: 10 });
      expect(await settles(id)).toHaveLength(1);
    }
    expect(await usage(ws)).toMatchObject({ credits_used: 20, credits_reserved: 10 });
  });

  it('groups of several processes over the same jobs, in opposite orders, neither deadlock nor double-bill', async () => {
    const a = await stack.workspace({ credits: 10_000 });
    const b = await stack.workspace({ credits: 10_000 });
    for (let round = 0; round < 3; round++) {
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) ids.push(await submit(i % 2 === 0 ? a : b, `race_${round}_${i}`, 10));
      const jobs = await claimAll(ids);
      // Each job is owned by exactly one of the two groups; the other holds a stale lease.
      const first = jobs.map((j, i) => delivered(j, 10, i % 3 === 0 ? j.lease_token! : 'stale'));
      const second = jobs.map((j, i) => delivered(j, 10, i % 3 === 0 ? 'stale' : j.lease_token!)).reverse();
      const [r1, r2] = await Promise.all([completeJobs(stack.runtime.services, first), completeJobs(stack.runtime.services, second)]);
      const owned = [...r1, ...r2].filter((r) => r === true);
      expect(owned).toHaveLength(12);
      for (const id of ids) {
        expect(await job(id)).toMatchObject({ status: 'completed', billed_credits: 20 });
        expect(await settles(id)).toHaveLength(1);
      }
    }
    expect(await usage(a)).toMatchObject({ credits_used: 3 * 6 * 20, credits_reserved: 0 });
    expect(await usage(b)).toMatchObject({ credits_used: 3 * 6 * 20, credits_reserved: 0 });
  });
});

describe('settleReservations', () => {
  const reserve = (workspaceId: string, credits: number) => reserveForTest(stack, workspaceId, credits);

  async function ledgerOf(workspaceId: string) {
    return stack.runtime.db
      .selectFrom('credit_ledger')
      .select(['entry_type', 'bucket', 'credits', 'plan_credits', 'promo_credits', 'purchased_credits', 'units', 'period_start', 'note'])
      .where('workspace_id', '=', workspaceId)
      .orderBy('id')
      .execute();
  }

  async function balanceOf(workspaceId: string) {
    const {
      workspace_id: _id,
      updated_at: _at,
      ...rest
    } = await stack.runtime.db.selectFrom('credit_balances').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow();
    return rest;
  }

  it('leaves the ledger and balance exactly as one-by-one settlement does, month rollover included', async () => {
    const charges = [20, 5, 40, 0, 99, 13];
    const promoExpiry = new Date(Date.now() + 3_600_000);
    const setups = [];
    for (let k = 0; k < 2; k++) {
      const ws = await stack.workspace({ credits: 30 });
      await ws.grant(50, 'promotional', promoExpiry);
      await ws.grant(100, 'purchased');
      const jobs: string[] = [];
      for (const credits of [20, 40, 40, 40, 10, 15]) jobs.push(await reserve(ws.workspaceId, credits));
      // The balance was last touched in an earlier month: settling rolls it over first.
      await stack.runtime.db
        .updateTable('credit_balances')
        .set({ period_start: '2000-01-01', plan_used: 7 })
        .where('workspace_id', '=', ws.workspaceId)
        .execute();
      setups.push({ ws, jobs });
    }
    const now = new Date();
    const [batched, single] = setups as [(typeof setups)[0], (typeof setups)[0]];
    const many = await stack.runtime.db.transaction().execute((tx) =>
      settleReservations(
        tx,
        now,
        batched.jobs.map((jobId, i) => ({ jobId, credits: charges[i], units: charges[i] })),
      ),
    );
    const oneByOne: Array<number | null> = [];
    for (const [i, jobId] of single.jobs.entries()) {
      oneByOne.push(
        await stack.runtime.db.transaction().execute((tx) => settleReservation(tx, now, { jobId, credits: charges[i], units: charges[i] })),
      );
    }
    expect(batched.jobs.map((id) => many.get(id) ?? null)).toEqual(oneByOne);
    expect(oneByOne).toEqual([20, 5, 40, 0, 10, 13]);
    expect(await ledgerOf(batched.ws.workspaceId)).toEqual(await ledgerOf(single.ws.workspaceId));
    expect(await balanceOf(batched.ws.workspaceId)).toEqual(await balanceOf(single.ws.workspaceId));
    expect((await ledgerOf(batched.ws.workspaceId)).filter((e) => e.entry_type === 'plan_allowance')).toHaveLength(2);

    // Settled once: again, nothing is charged.
    const again = await stack.runtime.db.transaction().execute((tx) =>
      settleReservations(
        tx,
        now,
        batched.jobs.map((jobId) => ({ jobId, credits: 1, units: 1 })),
      ),
    );
    expect(again.size).toBe(0);
    expect(await ledgerOf(batched.ws.workspaceId)).toEqual(await ledgerOf(single.ws.workspaceId));
  });
});
