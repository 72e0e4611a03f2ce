import { type FakeStripe, metadataOf, startFakeStripe, type StripeEvent } from '@sdx/fake-stripe';
import type { components } from '@sdx/contract';
import { checkLedger, eventually, type SeededWorkspace, startTestStack, type TestStack } from '@sdx/testing';

type Payment = components['schemas']['Payment'];
type AuditEvent = components['schemas']['AuditEvent'];

/**
 * Buying credit packs through Stripe Checkout (extensions-2.md 1), through HTTP against the fake
 * Stripe, whose parameter checks are Stripe's own: the session the service creates, the grant
 * made once per session by its signed webhook (whichever of its events arrive, however often),
 * the card saved for auto-recharge, the refusals (bad or stale signature, amount mismatch) and
 * the payments list.
 */

let fake: FakeStripe;
let stack: TestStack;
beforeAll(async () => {
  fake = await startFakeStripe({ retryDelaysMs: [100, 300] });
  stack = await startTestStack({ stripe: fake, env: { APP_URL: 'http://console.test' } });
});
afterAll(async () => {
  await stack?.close();
  await fake?.close();
});
afterEach(async () => {
  expect((await checkLedger(stack.runtime.db)).problems).toEqual([]);
});

const WEBHOOK = '/v1/billing/stripe/webhook';

async function checkout(ws: SeededWorkspace, packId = 'pack_10k', extra: Record<string, unknown> = {}) {
  const res = await stack.api.post('/v1/billing/checkout', { headers: ws.auth, body: { pack_id: packId, ...extra } });
  expect(res.status).toBe(201);
  return res.body as { checkout_id: string; url: string };
}

async function usage(ws: SeededWorkspace) {
  const res = await stack.api.get('/v1/usage/current', { headers: ws.auth });
  expect(res.status).toBe(200);
  return res.body as { purchased_credits: number; lifetime_purchased: number };
}

async function payments(ws: SeededWorkspace) {
  const res = await stack.api.get('/v1/billing/payments', { headers: ws.auth });
  expect(res.status).toBe(200);
  return res.body.data as Payment[];
}

/** Posts an event to the webhook as Stripe would: the exact bytes, signed (at `timestamp`, with `secret`). */
function deliver(event: StripeEvent, options: { timestamp?: number; secret?: string; signature?: string | null } = {}) {
  const payload = JSON.stringify(event);
  const signature = options.signature === undefined ? fake.sign(payload, options.timestamp, options.secret) : options.signature;
  return stack.api.post(WEBHOOK, { raw: payload, headers: signature === null ? {} : { 'Stripe-Signature': signature } });
}

async function stripeEventRows(id: string): Promise<number> {
  const row = await stack.runtime.db
    .selectFrom('stripe_events')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('a checkout, end to end', () => {
  it('creates the customer once and a Checkout Session with the spec parameters; the paid session grants the pack once and saves the card', async () => {
    const ws = await stack.workspace({ credits: 0 });
    const first = await checkout(ws);
    expect(first.checkout_id).toMatch(/^cs_/);
    expect(first.url).toContain(first.checkout_id);

    const customerCalls = fake.calls.filter(
      (c) => c.method === 'POST' && c.path === '/v1/customers' && metadataOf(c).workspace_id === ws.workspaceId,
    );
    expect(customerCalls).toHaveLength(1);
    expect(customerCalls[0].idempotencyKey).toBe(`customer-${ws.workspaceId}`);
    const session = fake.calls.find(
      (c) => c.method === 'POST' && c.path === '/v1/checkout/sessions' && metadataOf(c).workspace_id === ws.workspaceId,
    )!;
    expect(session.status).toBe(200);
    const payment = (await payments(ws))[0];
    expect(session.params).toMatchObject({
      mode: 'payment',
      client_reference_id: ws.workspaceId,
      metadata: { workspace_id: ws.workspaceId, pack_id: 'pack_10k', payment_id: payment.id },
      line_items: [{ price_data: { currency: 'usd', unit_amount: 1000, product_data: { name: expect.any(String) } }, quantity: 1 }],
      payment_intent_data: { setup_future_usage: 'off_session', metadata: { workspace_id: ws.workspaceId, pack_id: 'pack_10k' } },
      success_url: `http://console.test/console/w/${ws.workspaceId}/billing?checkout=success`,
      cancel_url: `http://console.test/console/w/${ws.workspaceId}/billing?checkout=cancelled`,
    });
    expect(payment).toMatchObject({
      kind: 'checkout',
      pack_id: 'pack_10k',
      credits: 10000,
      amount: 1000,
      currency: 'usd',
      status: 'pending',
      paid_at: null,
      refunded_credits: 0,
      refund_shortfall_credits: 0,
    });

    // A second checkout reuses the customer.
    const second = await checkout(ws, 'pack_100k', { success_url: 'https://buyer.example/ok', cancel_url: 'https://buyer.example/no' });
    expect(fake.calls.filter((c) => c.path === '/v1/customers' && metadataOf(c).workspace_id === ws.workspaceId)).toHaveLength(1);
    const secondCall = fake.calls.find(
      (c) => c.path === '/v1/checkout/sessions' && metadataOf(c).pack_id === 'pack_100k' && metadataOf(c).workspace_id === ws.workspaceId,
    )!;
    expect(secondCall.params).toMatchObject({
      success_url: 'https://buyer.example/ok',
      cancel_url: 'https://buyer.example/no',
      customer: session.params.customer,
    });

    const paidEvents = await fake.payCheckoutSession(first.checkout_id, { card: { brand: 'mastercard', last4: '4444' } });
    await fake.settled();
    // The checkout's own payment_intent.succeeded is recorded and ignored (its session event granted); charge.succeeded is not acted on.
    const outcomes = await stack.runtime.db
      .selectFrom('stripe_events')
      .select(['type', 'outcome', 'payment_id'])
      .where(
        'id',
        'in',
        paidEvents.map((e) => e.id),
      )
      .execute();
    expect(outcomes).toEqual(
      expect.arrayContaining([
        { type: 'checkout.session.completed', outcome: 'handled', payment_id: payment.id },
        { type: 'payment_intent.succeeded', outcome: 'ignored', payment_id: null },
      ]),
    );
    expect(outcomes.some((o) => o.type === 'charge.succeeded')).toBe(false);
    expect(await usage(ws)).toMatchObject({ purchased_credits: 10000, lifetime_purchased: 10000 });
    const paid = (await payments(ws)).find((p) => p.id === payment.id)!;
    expect(paid.status).toBe('paid');
    expect(paid.paid_at).not.toBeNull();
    const billing = await stack.api.get('/v1/billing', { headers: ws.auth });
    expect(billing.body.auto_recharge.payment_method).toEqual({ brand: 'mastercard', last4: '4444' });
    // The card was read from Stripe: the PaymentIntent, then its payment method.
    expect(fake.calls.some((c) => c.method === 'GET' && c.path.startsWith('/v1/payment_intents/'))).toBe(true);
    expect(fake.calls.some((c) => c.method === 'GET' && c.path.startsWith('/v1/payment_methods/'))).toBe(true);
    // Every event the fake sent was accepted.
    expect(fake.deliveries.filter((d) => d.status !== 200)).toEqual([]);

    const audit = await stack.api.get('/v1/audit-events', { headers: ws.auth });
    const created = (audit.body as AuditEvent[]).filter((e) => e.action === 'billing.checkout_created');
    expect(created).toHaveLength(2);
    expect(created.map((e) => e.data.checkout_id).sort()).toEqual([first.checkout_id, second.checkout_id].sort());

    const ledger = await stack.runtime.db
      .selectFrom('credit_ledger')
      .selectAll()
      .where('workspace_id', '=', ws.workspaceId)
      .where('entry_type', '=', 'purchase')
      .execute();
    expect(ledger).toHaveLength(1);
    expect(ledger[0]).toMatchObject({ bucket: 'purchased', credits: 10000, purchased_credits: 10000, payment_id: payment.id });
  });

  it('checkouts at the same moment make one Stripe customer', async () => {
    const ws = await stack.workspace({ credits: 0 });
    const made = await Promise.all(Array.from({ length: 5 }, () => checkout(ws)));
    expect(new Set(made.map((m) => m.checkout_id)).size).toBe(5);
    const customers = await stack.runtime.db
      .selectFrom('billing_customers')
      .selectAll()
      .where('workspace_id', '=', ws.workspaceId)
      .execute();
    expect(customers).toHaveLength(1);
    const sessions = fake.calls.filter((c) => c.path === '/v1/checkout/sessions' && metadataOf(c).workspace_id === ws.workspaceId);
    expect(new Set(sessions.map((c) => c.params.customer))).toEqual(new Set([customers[0].stripe_customer_id]));
  });

  it('an async payment (completed unpaid, then async_payment_succeeded) grants once', async () => {
    const ws = await stack.workspace({ credits: 0 });
    const { checkout_id } = await checkout(ws);
    const events = await fake.payCheckoutSession(checkout_id, { async: true });
    expect(events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['checkout.session.completed', 'checkout.session.async_payment_succeeded']),
    );
    await fake.settled();
    expect(await usage(ws)).toMatchObject({ purchased_credits: 10000, lifetime_purchased: 10000 });
    expect((await payments(ws))[0].status).toBe('paid');
  });
});

describe('each event once, each session once', () => {
  it('the same event delivered 10 times at once grants once: one handled, the rest duplicate', async () => {
    const ws = await stack.workspace({ credits: 0 });
    const { checkout_id } = await checkout(ws);
    fake.setWebhookUrl(null);
    let events: StripeEvent[];
    try {
      events = await fake.payCheckoutSession(checkout_id);
    } finally {
      fake.setWebhookUrl(`${stack.url}${WEBHOOK}`);
    }
    const completed = events.find((e) => e.type === 'checkout.session.completed')!;
    const answers = await Promise.all(Array.from({ length: 10 }, () => deliver(completed)));
    expect(answers.map((r) => r.status)).toEqual(Array(10).fill(200));
    const outcomes = answers.map((r) => r.body.outcome).sort();
    expect(outcomes.filter((o) => o === 'handled')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'duplicate')).toHaveLength(9);
    expect(await usage(ws)).toMatchObject({ purchased_credits: 10000, lifetime_purchased: 10000 });
    // A later repeat changes nothing either.
    expect((await deliver(completed)).body).toEqual({ received: true, outcome: 'duplicate' });
    // The session's other event (a different event ID for the same session) grants nothing more.
    const again = fake.buildEvent('checkout.session.async_payment_succeeded', completed.data.object);
    expect((await deliver(again)).body).toEqual({ received: true, outcome: 'handled' });
    expect(await usage(ws)).toMatchObject({ purchased_credits: 10000, lifetime_purchased: 10000 });
    expect(
      await stack.runtime.db
        .selectFrom('credit_ledger')
        .select('id')
        .where('workspace_id', '=', ws.workspaceId)
        .where('entry_type', '=', 'purchase')
        .execute(),
    ).toHaveLength(1);
  });

  it('a paid session whose payment row is missing (made before a crash) is granted from its metadata', async () => {
    const ws = await stack.workspace({ credits: 0 });
    const { checkout_id } = await checkout(ws);
    const [row] = await stack.runtime.db
      .deleteFrom('billing_payments')
      .where('checkout_session_id', '=', checkout_id)
      .returningAll()
      .execute();
    await fake.payCheckoutSession(checkout_id);
    await fake.settled();
    expect(await usage(ws)).toMatchObject({ purchased_credits: 10000 });
    const list = await payments(ws);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ id: row.id, status: 'paid', credits: 10000 });
  });
});

describe('refusals', () => {
  it('a stale (301 s), a wrong, a foreign-secret or a missing signature is 400 invalid_signature and writes nothing', async () => {
    const ws = await stack.workspace({ credits: 0 });
    const { checkout_id } = await checkout(ws);
    fake.setWebhookUrl(null);
    let events: StripeEvent[];
    try {
      events = await fake.payCheckoutSession(checkout_id);
    } finally {
      fake.setWebhookUrl(`${stack.url}${WEBHOOK}`);
    }
    const completed = events.find((e) => e.type === 'checkout.session.completed')!;
    const now = Math.floor(Date.now() / 1000);
    const refused = [
      await deliver(completed, { timestamp: now - 301 }),
      await deliver(completed, { secret: 'whsec_not_the_one' }),
      await deliver(completed, { signature: `t=${now},v1=${'0'.repeat(64)}` }),
      await deliver(completed, { signature: 'garbage' }),
      await deliver(completed, { signature: null }),
    ];
    for (const res of refused) {
      expect(res.status).toBe(400);
      expect(res.body.detail.error).toBe('invalid_signature');
    }
    // A body changed after signing fails too.
    const payload = JSON.stringify(completed);
    const tampered = await stack.api.post(WEBHOOK, {
      raw: payload.replace('"paid"', '"paid" '),
      headers: { 'Stripe-Signature': fake.sign(payload) },
    });
    expect(tampered.status).toBe(400);
    expect(await stripeEventRows(completed.id)).toBe(0);
    expect(await usage(ws)).toMatchObject({ purchased_credits: 0 });
    // Within the tolerance (299 s old) it is handled.
    expect((await deliver(completed, { timestamp: now - 299 })).body).toEqual({ received: true, outcome: 'handled' });
    expect(await usage(ws)).toMatchObject({ purchased_credits: 10000 });
  });

  it("an amount or currency other than the pack's answers 200, records mismatch and grants nothing", async () => {
    const ws = await stack.workspace({ credits: 0 });
    const cheap = await checkout(ws);
    const euros = await checkout(ws);
    await fake.payCheckoutSession(cheap.checkout_id, { amountTotal: 1 });
    await fake.payCheckoutSession(euros.checkout_id, { currency: 'eur' });
    await fake.settled();
    expect(fake.deliveries.filter((d) => d.status !== 200)).toEqual([]);
    expect(await usage(ws)).toMatchObject({ purchased_credits: 0, lifetime_purchased: 0 });
    expect((await payments(ws)).map((p) => p.status)).toEqual(['mismatch', 'mismatch']);
    const billing = await stack.api.get('/v1/billing', { headers: ws.auth });
    expect(billing.body.auto_recharge.payment_method).toBeNull();
  });

  it('other event types answer 200 ignored; unknown packs 422 unknown_pack', async () => {
    const ws = await stack.workspace({ credits: 0 });
    const other = fake.buildEvent('customer.created', { id: 'cus_x', object: 'customer', metadata: {} });
    expect((await deliver(other)).body).toEqual({ received: true, outcome: 'ignored' });
    // A checkout.session event of a session the service did not make is ignored too.
    const foreign = fake.buildEvent('checkout.session.completed', {
      id: 'cs_foreign',
      object: 'checkout.session',
      payment_status: 'paid',
      amount_total: 1000,
      currency: 'usd',
      metadata: {},
    });
    expect((await deliver(foreign)).body.outcome).toBe('ignored');
    const unknown = await stack.api.post('/v1/billing/checkout', { headers: ws.auth, body: { pack_id: 'pack_1m' } });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail).toEqual({ error: 'unknown_pack', message: expect.any(String) });
    expect(await payments(ws)).toEqual([]);
  });
});

describe('payments list and roles', () => {
  it('lists newest first in pages; only admins list payments and buy; viewers read billing', async () => {
    const ws = await stack.workspace({ credits: 0 });
    const made: string[] = [];
    for (let i = 0; i < 3; i += 1) made.push((await checkout(ws)).checkout_id);
    const ids = (await payments(ws)).map((p) => p.id);
    expect(ids).toHaveLength(3);
    expect([...ids].sort().reverse()).toEqual(ids);
    const page1 = await stack.api.get('/v1/billing/payments', { headers: ws.auth, query: { limit: 2 } });
    expect(page1.body.has_more).toBe(true);
    expect(page1.body.data.map((p: { id: string }) => p.id)).toEqual(ids.slice(0, 2));
    const page2 = await stack.api.get('/v1/billing/payments', { headers: ws.auth, query: { limit: 2, starting_after: ids[1] } });
    expect(page2.body).toMatchObject({ has_more: false, data: [{ id: ids[2] }] });
    const other = await stack.workspace({ credits: 0 });
    const foreign = await stack.api.get('/v1/billing/payments', { headers: other.auth, query: { starting_after: ids[0] } });
    expect(foreign.status).toBe(422);
    expect((await stack.api.get('/v1/billing/payments', { headers: ws.auth, query: { limit: 101 } })).status).toBe(422);

    const keyOf = async (role: string) => {
      const made = await stack.api.post('/v1/keys', { headers: ws.auth, body: { name: role, role } });
      expect(made.status).toBe(201);
      return { 'X-API-Key': made.body.api_key as string };
    };
    const viewer = await keyOf('viewer');
    const member = await keyOf('member');
    const admin = await keyOf('admin');
    const got = await stack.api.get('/v1/billing', { headers: viewer });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      packs: [
        { id: 'pack_10k', credits: 10000, amount: 1000, currency: 'usd' },
        { id: 'pack_100k', credits: 100000, amount: 9000, currency: 'usd' },
      ],
      auto_recharge: { enabled: false, threshold_credits: null, pack_id: null, payment_method: null },
      limits: { monthly_credit_cap: null, low_credits_threshold: null },
      month_spent_credits: 0,
    });
    for (const auth of [viewer, member]) {
      expect((await stack.api.get('/v1/billing/payments', { headers: auth })).status).toBe(403);
      expect((await stack.api.post('/v1/billing/checkout', { headers: auth, body: { pack_id: 'pack_10k' } })).status).toBe(403);
      expect(
        (await stack.api.put('/v1/billing/limits', { headers: auth, body: { monthly_credit_cap: 1, low_credits_threshold: null } })).status,
      ).toBe(403);
      expect(
        (
          await stack.api.put('/v1/billing/auto-recharge', {
            headers: auth,
            body: { enabled: false, threshold_credits: 1, pack_id: 'pack_10k' },
          })
        ).status,
      ).toBe(403);
    }
    expect((await stack.api.get('/v1/billing/payments', { headers: admin })).status).toBe(200);
    expect((await stack.api.post('/v1/billing/checkout', { headers: admin, body: { pack_id: 'pack_10k' } })).status).toBe(201);
    expect((await stack.api.get('/v1/billing')).status).toBe(401);
    expect((await stack.api.post('/v1/billing/checkout', { body: { pack_id: 'pack_10k' } })).status).toBe(401);
  });

  it('PUT /v1/billing/limits sets the cap and the alert threshold, audited', async () => {
    const ws = await stack.workspace({ credits: 0 });
    const set = await stack.api.put('/v1/billing/limits', {
      headers: ws.auth,
      body: { monthly_credit_cap: 5000, low_credits_threshold: 100 },
    });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ monthly_credit_cap: 5000, low_credits_threshold: 100 });
    expect((await stack.api.get('/v1/billing', { headers: ws.auth })).body.limits).toEqual({
      monthly_credit_cap: 5000,
      low_credits_threshold: 100,
    });
    const cleared = await stack.api.put('/v1/billing/limits', {
      headers: ws.auth,
      body: { monthly_credit_cap: null, low_credits_threshold: null },
    });
    expect(cleared.body).toEqual({ monthly_credit_cap: null, low_credits_threshold: null });
    expect(
      (await stack.api.put('/v1/billing/limits', { headers: ws.auth, body: { monthly_credit_cap: -1, low_credits_threshold: null } }))
        .status,
    ).toBe(422);
    expect((await stack.api.put('/v1/billing/limits', { headers: ws.auth, body: { monthly_credit_cap: 1 } })).status).toBe(422);
    const audit = await eventually(async () => {
      const res = await stack.api.get('/v1/audit-events', { headers: ws.auth });
      const found = (res.body as AuditEvent[]).filter((e) => e.action === 'billing.limits_updated');
      return found.length === 2 ? found : null;
    });
    expect(audit.map((e) => e.data)).toEqual([
      { monthly_credit_cap: null, low_credits_threshold: null },
      { monthly_credit_cap: 5000, low_credits_threshold: 100 },
    ]);
  });
});
