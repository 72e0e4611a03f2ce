import { type FakeStripe, startFakeStripe } from '@sdx/fake-stripe';
import { checkLedger, eventually, startTestStack, type TestStack } from '@sdx/testing';

/**
 * Auto-recharge under concurrency (extensions-2.md 1): 100 jobs settle at the same moment, each
 * settlement leaving the available credits below the threshold. Each settlement asks for a
 * recharge in its own transaction, and exactly one off-session PaymentIntent is created: one
 * recharge is in flight per workspace until Stripe says it succeeded or failed. Its grant comes
 * once, from payment_intent.succeeded.
 */

let fake: FakeStripe;
let stack: TestStack;
beforeAll(async () => {
  fake = await startFakeStripe({ retryDelaysMs: [100, 300, 1000] });
  stack = await startTestStack({ stripe: fake, withWorker: true, workerConcurrency: 100 });
});
afterAll(async () => {
  await stack?.close();
  await fake?.close();
});

it('100 concurrent settlements crossing the threshold create one PaymentIntent, granted once', async () => {
  const ws = await stack.workspace({ credits: 0, maxActiveJobs: 1000 });
  const made = await stack.api.post('/v1/billing/checkout', { headers: ws.auth, body: { pack_id: 'pack_10k' } });
  expect(made.status).toBe(201);
  await fake.payCheckoutSession(made.body.checkout_id);
  await eventually(async () => (await stack.api.get('/v1/usage/current', { headers: ws.auth })).body.purchased_credits === 10_000, 15_000);

  // 100 slow jobs reserve the 10,000 credits between them (100 each: 50 followers at 2 credits).
  const body = (i: number) => ({ platform: 'twitter', operation: 'followers', target: `sandbox_slow_2500_rc${i}`, limit: 50 });
  const quoted = await stack.api.post('/v1/quotes', { headers: ws.auth, body: body(0) });
  expect(quoted.body.max_credits).toBe(100);
  const jobs = await Promise.all(Array.from({ length: 100 }, (_, i) => stack.api.post('/v1/jobs', { headers: ws.auth, body: body(i) })));
  expect(jobs.map((j) => j.status)).toEqual(Array(100).fill(202));
  // Auto-recharge turned on while they run: their settlements, not the admissions, cross the threshold.
  const on = await stack.api.put('/v1/billing/auto-recharge', {
    headers: ws.auth,
    body: { enabled: true, threshold_credits: 5_000, pack_id: 'pack_10k' },
  });
  expect(on.status).toBe(200);
  expect(fake.paymentIntentsCreated()).toBe(0);

  await eventually(async () => {
    const rows = await stack.runtime.db
      .selectFrom('jobs')
      .select('status')
      .where('workspace_id', '=', ws.workspaceId)
      .where('status', '=', 'completed')
      .execute();
    return rows.length === 100;
  }, 60_000);
  await eventually(async () => (await stack.api.get('/v1/usage/current', { headers: ws.auth })).body.purchased_credits === 10_000, 20_000);
  await fake.settled();
  await new Promise((resolve) => setTimeout(resolve, 500));

  expect(fake.paymentIntentsCreated()).toBe(1);
  const payments = await stack.api.get('/v1/billing/payments', { headers: ws.auth });
  const recharges = (payments.body.data as Array<{ kind: string; status: string }>).filter((p) => p.kind === 'auto_recharge');
  expect(recharges).toEqual([expect.objectContaining({ kind: 'auto_recharge', status: 'paid', credits: 10_000 })]);
  const usage = (await stack.api.get('/v1/usage/current', { headers: ws.auth })).body;
  // Every job delivered its 50 results: 10,000 spent of the first pack, the recharge's 10,000 left.
  expect(usage).toMatchObject({ purchased_credits: 10_000, lifetime_purchased: 20_000, credits_reserved: 0 });
  expect((await checkLedger(stack.runtime.db)).problems).toEqual([]);
}, 120_000);
