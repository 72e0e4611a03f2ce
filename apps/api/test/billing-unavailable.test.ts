import { type FakeStripe, startFakeStripe } from '@sdx/fake-stripe';
import { startTestStack, type TestStack } from '@sdx/testing';

/**
 * Billing without Stripe configured answers every write 503 `billing_unavailable` and still reads
 * (extensions-2.md 1); the limits work without it. Stripe's webhook while the database is
 * unreachable answers 503 (Stripe retries), never 500.
 */

describe('without STRIPE_SECRET_KEY', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('every billing write but the limits is 503 billing_unavailable; GET /v1/billing answers', async () => {
    const ws = await stack.workspace({ credits: 0 });
    const writes = [
      await stack.api.post('/v1/billing/checkout', { headers: ws.auth, body: { pack_id: 'pack_10k' } }),
      await stack.api.put('/v1/billing/auto-recharge', {
        headers: ws.auth,
        body: { enabled: true, threshold_credits: 10, pack_id: 'pack_10k' },
      }),
      await stack.api.put('/v1/billing/auto-recharge', {
        headers: ws.auth,
        body: { enabled: false, threshold_credits: 10, pack_id: 'pack_10k' },
      }),
      await stack.api.post('/v1/billing/stripe/webhook', {
        raw: '{"id":"evt_1","object":"event","type":"checkout.session.completed"}',
        headers: { 'Stripe-Signature': 't=1,v1=00' },
      }),
      await stack.api.post('/v1/billing/subscription', { headers: ws.auth, body: { plan_id: 'starter' } }),
      await stack.api.delete('/v1/billing/subscription', { headers: ws.auth }),
      await stack.api.post('/v1/billing/portal', { headers: ws.auth, body: {} }),
    ];
    for (const res of writes) {
      expect(res.status).toBe(503);
      expect(res.body.detail.error).toBe('billing_unavailable');
    }
    const read = await stack.api.get('/v1/billing', { headers: ws.auth });
    expect(read.status).toBe(200);
    expect(read.body.packs).toHaveLength(2);
    // The page knows before any click that payments are off; the plans and the free plan still show.
    expect(read.body.payments_enabled).toBe(false);
    expect(read.body.plans.map((p: { id: string }) => p.id)).toEqual(['free', 'starter', 'pro']);
    expect(read.body.plan.id).toBe('free');
    expect(read.body.subscription).toBeNull();
    expect((await stack.api.get('/v1/billing/invoices', { headers: ws.auth })).body).toEqual({ data: [], has_more: false });
    expect((await stack.api.get('/v1/billing/payments', { headers: ws.auth })).body).toEqual({ data: [], has_more: false });
    const limits = await stack.api.put('/v1/billing/limits', {
      headers: ws.auth,
      body: { monthly_credit_cap: 100, low_credits_threshold: null },
    });
    expect(limits.status).toBe(200);
    expect(limits.body).toEqual({ monthly_credit_cap: 100, low_credits_threshold: null });
    const rows = await stack.runtime.db.selectFrom('stripe_events').select('id').execute();
    expect(rows).toEqual([]);
  });
});

describe('database unreachable', () => {
  let fake: FakeStripe;
  let stack: TestStack;
  beforeAll(async () => {
    fake = await startFakeStripe();
    // The app's pool points at a port nothing listens on.
    stack = await startTestStack({ stripe: fake, env: { DATABASE_URL: 'postgres://postgres@127.0.0.1:9/nowhere' } });
  });
  afterAll(async () => {
    await stack?.close().catch(() => undefined);
    await fake?.close();
  });

  it('a signed event answers 503 service_unavailable so Stripe retries; a bad signature is still 400', async () => {
    const event = fake.buildEvent('checkout.session.completed', {
      id: 'cs_x',
      object: 'checkout.session',
      payment_status: 'paid',
      amount_total: 1000,
      currency: 'usd',
      metadata: {},
    });
    const payload = JSON.stringify(event);
    const res = await stack.api.post('/v1/billing/stripe/webhook', { raw: payload, headers: { 'Stripe-Signature': fake.sign(payload) } });
    expect(res.status).toBe(503);
    expect(res.body.detail.error).toBe('service_unavailable');
    const bad = await stack.api.post('/v1/billing/stripe/webhook', {
      raw: payload,
      headers: { 'Stripe-Signature': fake.sign(payload, undefined, 'whsec_other') },
    });
    expect(bad.status).toBe(400);
    // An ignored type needs no database.
    const other = fake.buildEvent('customer.created', { id: 'cus_x', object: 'customer' });
    const otherPayload = JSON.stringify(other);
    expect(
      (await stack.api.post('/v1/billing/stripe/webhook', { raw: otherPayload, headers: { 'Stripe-Signature': fake.sign(otherPayload) } }))
        .body,
    ).toEqual({ received: true, outcome: 'ignored' });
  });
});
