import { type FakeStripe, startFakeStripe } from '@sdx/fake-stripe';
import { ApiError, type Client } from '@sdx/sdk';
import { eventually, type SeededWorkspace, type ServedStack, startServedStack, startTestStack, type TestStack } from '@sdx/testing';
import { clientFor, type Sent } from './support';

/**
 * `client.billing` against the real service and the fake Stripe: the plans and the current one,
 * subscribing through Checkout (the plan applies once the first invoice is paid), an upgrade, the
 * invoices with their hosted pages, the portal and cancelling; the API's errors as typed
 * `ApiError`s, and a service without payments configured. Every answer is checked against
 * openapi.yaml by the client's fetch.
 */

const PLANS = JSON.stringify([
  { id: 'free', name: 'Free', monthly_credits: 1000, amount: 0, currency: 'usd' },
  { id: 'starter', name: 'Starter', monthly_credits: 50000, amount: 4900, currency: 'usd' },
  { id: 'pro', name: 'Pro', monthly_credits: 300000, amount: 19900, currency: 'usd' },
]);

let fake: FakeStripe;
let stack: TestStack;
let unpaid: ServedStack;
beforeAll(async () => {
  fake = await startFakeStripe({ retryDelaysMs: [100, 300] });
  stack = await startTestStack({ stripe: fake, env: { APP_URL: 'http://console.test', PLANS } });
  unpaid = await startServedStack({ env: { APP_URL: 'http://console.test', PLANS } });
});
afterAll(async () => {
  await stack?.close();
  await unpaid?.close();
  await fake?.close();
});

let ws: SeededWorkspace;
let sdx: Client;
let sent: Sent[];
beforeEach(async () => {
  ws = await stack.workspace({ credits: 1000 });
  sent = [];
  sdx = clientFor(stack.url!, ws, { sent });
});

/** Waits until `check` stops throwing. */
function until(check: () => Promise<unknown>): Promise<true> {
  return eventually(async () => {
    await check();
    return true as const;
  });
}

it('lists the plans, free first, with the current plan and no subscription before subscribing', async () => {
  const view = await sdx.billing.get();
  expect(view.payments_enabled).toBe(true);
  expect(view.plans.map((p) => [p.id, p.name, p.monthly_credits, p.amount, p.currency])).toEqual([
    ['free', 'Free', 1000, 0, 'usd'],
    ['starter', 'Starter', 50000, 4900, 'usd'],
    ['pro', 'Pro', 300000, 19900, 'usd'],
  ]);
  expect(view.plan.id).toBe('free');
  expect(view.subscription).toBeNull();
  expect(await sdx.billing.invoices().toArray()).toEqual([]);
  expect(sent.map((s) => `${s.method} ${s.path.split('?')[0]}`)).toEqual(['GET /v1/billing', 'GET /v1/billing/invoices']);
});

it('subscribes through Checkout, applies the plan once paid, upgrades, lists the invoices, opens the portal and cancels', async () => {
  const first = await sdx.billing.subscribe({ plan_id: 'starter' });
  expect(first.subscription).toBeUndefined();
  const checkout = first.checkout!;
  expect(checkout.checkout_id).toMatch(/^cs_/);
  expect(checkout.url).toContain(checkout.checkout_id);
  // Nothing changes before Stripe says the first invoice is paid.
  expect((await sdx.billing.get()).plan.id).toBe('free');

  await fake.payCheckoutSession(checkout.checkout_id);
  await fake.settled();
  await until(async () => expect((await sdx.billing.get()).plan.id).toBe('starter'));
  const subscribed = await sdx.billing.get();
  const sub = subscribed.subscription!;
  expect(sub).toMatchObject({
    id: expect.stringMatching(/^sub_/),
    plan_id: 'starter',
    status: 'active',
    cancel_at_period_end: false,
    scheduled_plan_id: null,
  });
  expect(new Date(sub.current_period_end!).getTime()).toBeGreaterThan(Date.now() + 27 * 86_400_000);
  const paid = await sdx.billing.invoices().toArray();
  expect(paid).toHaveLength(1);
  expect(paid[0]).toMatchObject({
    id: expect.stringMatching(/^in_/),
    status: 'paid',
    amount_due: 4900,
    amount_paid: 4900,
    currency: 'usd',
  });
  expect(paid[0].hosted_invoice_url).toBe(`${fake.url}/invoices/${paid[0].id}`);

  // With a live subscription the same call changes it: an upgrade, invoiced now, the plan once paid.
  const up = await sdx.billing.subscribe({ plan_id: 'pro' });
  expect(up.checkout).toBeUndefined();
  expect(up.subscription).toMatchObject({ id: sub.id, status: 'active' });
  await fake.settled();
  await until(async () => expect((await sdx.billing.get()).plan.id).toBe('pro'));
  expect((await sdx.billing.get()).subscription).toMatchObject({ id: sub.id, plan_id: 'pro', scheduled_plan_id: null });

  // Invoices newest first, the same across pages of one (the last page says it is the last).
  const all = await sdx.billing.invoices().toArray();
  expect(all).toHaveLength(2);
  expect(all.map((i) => i.status)).toEqual(['paid', 'paid']);
  // Newest first (Stripe's `created` is in seconds: two invoices of the same second come in ID order).
  expect(all.map((i) => i.id)).toContain(paid[0].id);
  expect(Date.parse(all[0].created_at)).toBeGreaterThanOrEqual(Date.parse(all[1].created_at));
  for (const invoice of all) expect(invoice.hosted_invoice_url).toBe(`${fake.url}/invoices/${invoice.id}`);
  sent.length = 0;
  expect((await sdx.billing.invoices({ limit: 1 }).toArray()).map((i) => i.id)).toEqual(all.map((i) => i.id));
  expect(sent.map((s) => s.path)).toEqual(['/v1/billing/invoices?limit=1', `/v1/billing/invoices?limit=1&starting_after=${all[0].id}`]);
  const firstPage = await sdx.billing.invoices({ limit: 1 });
  expect(firstPage.data.map((i) => i.id)).toEqual([all[0].id]);
  expect(firstPage.hasMore).toBe(true);

  const portal = await sdx.billing.portal({ return_url: 'http://console.test/back' });
  expect(portal.url).toContain(`${fake.url}/portal/bps_`);
  expect(fake.calls.filter((c) => c.path === '/v1/billing_portal/sessions').at(-1)!.params).toMatchObject({
    return_url: 'http://console.test/back',
  });
  expect((await sdx.billing.portal()).url).toContain('/portal/bps_');

  // Cancelled at the end of the period: the plan stays until Stripe says it ended, then free.
  const cancelled = await sdx.billing.cancel();
  expect(cancelled).toMatchObject({ id: sub.id, plan_id: 'pro', status: 'active', cancel_at_period_end: true });
  expect((await sdx.billing.get()).plan.id).toBe('pro');
  fake.advanceSubscription(sub.id);
  await fake.settled();
  await until(async () => expect((await sdx.billing.get()).plan.id).toBe('free'));
  expect((await sdx.billing.get()).subscription).toMatchObject({ id: sub.id, status: 'canceled' });
});

it("answers the API's errors as typed ApiErrors: an unknown plan, free, a cancel without a subscription", async () => {
  for (const plan_id of ['enterprise', 'free']) {
    const error = await sdx.billing.subscribe({ plan_id }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 422, code: 'unknown_plan', requestId: expect.any(String) });
    expect((error as ApiError).message).toMatch(/^422 unknown_plan: ./);
  }
  await expect(sdx.billing.cancel()).rejects.toMatchObject({ status: 404, code: 'subscription_not_found' });
  // Nothing was asked of Stripe for this workspace, and it is still on free.
  expect((await sdx.billing.get()).plan.id).toBe('free');
  expect(await sdx.billing.invoices().toArray()).toEqual([]);
});

it('without payments configured: payments_enabled false, the plans still listed, and 503 billing_unavailable with its message', async () => {
  const other = clientFor(unpaid.url, await unpaid.stack.workspace({ credits: 10 }));
  const view = await other.billing.get();
  expect(view.payments_enabled).toBe(false);
  expect(view.plans.map((p) => p.id)).toEqual(['free', 'starter', 'pro']);
  expect(view.plan.id).toBe('free');
  for (const call of [() => other.billing.subscribe({ plan_id: 'starter' }), () => other.billing.cancel(), () => other.billing.portal()]) {
    const error = await call().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 503, code: 'billing_unavailable' });
    expect((error as ApiError).message).toBe('503 billing_unavailable: Payments are not configured on this service.');
  }
  expect(await other.billing.invoices().toArray()).toEqual([]);
});
