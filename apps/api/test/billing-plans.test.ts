import { type FakeStripe, metadataOf, startFakeStripe, type StripeEvent } from '@sdx/fake-stripe';
import type { components } from '@sdx/contract';
import { endGracePeriods } from '@sdx/domain/testing';
import {
  checkLedger,
  eventually,
  type SeededWorkspace,
  signUpUser,
  startSmtpCatcher,
  startTestStack,
  startWebhookReceiver,
  type SmtpCatcher,
  type TestStack,
  type WebhookReceiver,
} from '@sdx/testing';

type Billing = components['schemas']['Billing'];
type Subscription = NonNullable<components['schemas']['Subscription']>;
type Invoice = components['schemas']['Invoice'];

/**
 * Monthly plans (extensions-3.md 2), through HTTP against the fake Stripe: subscribing through
 * Checkout, upgrades and downgrades, cancellation, the portal, invoices, and each Stripe event
 * once per event ID whatever order they arrive in; failed invoices and the grace period; a
 * plan's quota and limits on the next request.
 */

const PLANS = JSON.stringify([
  { id: 'free', name: 'Free', monthly_credits: 1000, amount: 0, currency: 'usd' },
  {
    id: 'starter',
    name: 'Starter',
    monthly_credits: 50000,
    amount: 4900,
    currency: 'usd',
    limits: { rate_limit_per_minute: 700, max_active_jobs: 30 },
  },
  { id: 'pro', name: 'Pro', monthly_credits: 300000, amount: 19900, currency: 'usd', limits: { rate_limit_per_minute: 1200 } },
]);

let fake: FakeStripe;
let stack: TestStack;
let receiver: WebhookReceiver;
let smtp: SmtpCatcher;
beforeAll(async () => {
  fake = await startFakeStripe({ retryDelaysMs: [100, 300] });
  receiver = await startWebhookReceiver();
  smtp = await startSmtpCatcher();
  stack = await startTestStack({
    stripe: fake,
    env: {
      APP_URL: 'http://console.test',
      PLANS,
      PLAN_GRACE_DAYS: '7',
      WEBHOOK_ALLOW_HTTP: '1',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1',
      SMTP_URL: smtp.url,
      EMAIL_VERIFICATION: '0',
    },
  });
});
afterAll(async () => {
  await stack?.close();
  await fake?.close();
  await receiver?.close();
  await smtp?.close();
});

/** A webhook taking the billing events, and an owner and an admin who receive their mail (a viewer does not). */
async function watchBilling(ws: SeededWorkspace): Promise<{ owner: string; admin: string; viewer: string }> {
  const hook = await stack.api.post('/v1/webhooks', {
    headers: ws.auth,
    body: { url: receiver.url, events: ['billing.plan_changed', 'billing.invoice_payment_failed'] },
  });
  expect(hook.status).toBe(201);
  const [owner, admin, viewer] = [await signUpUser(stack), await signUpUser(stack), await signUpUser(stack)];
  await stack.runtime.db
    .insertInto('memberships')
    .values([
      { workspace_id: ws.workspaceId, user_id: owner.userId, role: 'owner' },
      { workspace_id: ws.workspaceId, user_id: admin.userId, role: 'admin' },
      { workspace_id: ws.workspaceId, user_id: viewer.userId, role: 'viewer' },
    ])
    .execute();
  return { owner: owner.email, admin: admin.email, viewer: viewer.email };
}

async function mailsTo(template: string): Promise<string[]> {
  const rows = await stack.runtime.db.selectFrom('mail_outbox').select('recipient').where('template', '=', template).execute();
  return rows.map((r) => r.recipient);
}
afterEach(async () => {
  expect((await checkLedger(stack.runtime.db)).problems).toEqual([]);
});

const WEBHOOK = '/v1/billing/stripe/webhook';

/** Waits until `check` stops throwing. */
function until(check: () => Promise<unknown>): Promise<true> {
  return eventually(async () => {
    await check();
    return true as const;
  });
}

function deliver(event: StripeEvent) {
  const payload = JSON.stringify(event);
  return stack.api.post(WEBHOOK, { raw: payload, headers: { 'Stripe-Signature': fake.sign(payload) } });
}

async function billing(ws: SeededWorkspace): Promise<Billing> {
  const res = await stack.api.get('/v1/billing', { headers: ws.auth });
  expect(res.status).toBe(200);
  return res.body as Billing;
}

async function quota(ws: SeededWorkspace): Promise<number> {
  const res = await stack.api.get('/v1/account', { headers: ws.auth });
  expect(res.status).toBe(200);
  return res.body.monthly_quota as number;
}

async function invoices(ws: SeededWorkspace): Promise<Invoice[]> {
  const res = await stack.api.get('/v1/billing/invoices', { headers: ws.auth });
  expect(res.status).toBe(200);
  return res.body.data as Invoice[];
}

/** Subscribes `ws` to `planId` through Checkout and pays it; resolves once the plan is in force. */
async function subscribe(ws: SeededWorkspace, planId = 'starter', credits = 50000): Promise<Subscription> {
  const res = await stack.api.post('/v1/billing/subscription', { headers: ws.auth, body: { plan_id: planId } });
  expect(res.status).toBe(201);
  await fake.payCheckoutSession(res.body.checkout_id);
  await fake.settled();
  await until(async () => expect(await quota(ws)).toBe(credits));
  return (await billing(ws)).subscription!;
}

function changeCalls(subscriptionId: string) {
  return fake.calls.filter((c) => c.method === 'POST' && c.path === `/v1/subscriptions/${subscriptionId}`);
}

describe('plans and GET /v1/billing', () => {
  it('lists the plans, free first, and every workspace is on free until it subscribes', async () => {
    const ws = await stack.workspace({ credits: 1000 });
    const body = await billing(ws);
    expect(body.payments_enabled).toBe(true);
    expect(body.plans.map((p) => [p.id, p.monthly_credits, p.amount])).toEqual([
      ['free', 1000, 0],
      ['starter', 50000, 4900],
      ['pro', 300000, 19900],
    ]);
    expect(body.plans[1].limits).toEqual({ rate_limit_per_minute: 700, max_active_jobs: 30 });
    expect(body.plan.id).toBe('free');
    expect(body.subscription).toBeNull();
  });

  it('refuses free and unknown plans with 422 unknown_plan, a cancel without a subscription with 404, and a viewer with 403', async () => {
    const ws = await stack.workspace();
    for (const plan_id of ['free', 'enterprise']) {
      const res = await stack.api.post('/v1/billing/subscription', { headers: ws.auth, body: { plan_id } });
      expect(res.status).toBe(422);
      expect(res.body.detail.error).toBe('unknown_plan');
    }
    const res = await stack.api.delete('/v1/billing/subscription', { headers: ws.auth });
    expect(res.status).toBe(404);
    expect(res.body.detail.error).toBe('subscription_not_found');
    expect(
      fake.calls.filter(
        (c) =>
          c.path === '/v1/checkout/sessions' &&
          metadataOf((c.params.subscription_data ?? {}) as Record<string, unknown>).workspace_id === ws.workspaceId,
      ),
    ).toEqual([]);
  });
});

describe('subscribing, changing and cancelling', () => {
  it('free → starter → pro → starter → cancelled → free, the quota following the paid invoices', async () => {
    const ws = await stack.workspace({ credits: 1000 });
    const created = await stack.api.post('/v1/billing/subscription', { headers: ws.auth, body: { plan_id: 'starter' } });
    expect(created.status).toBe(201);
    expect(created.body.checkout_id).toMatch(/^cs_/);
    const session = fake.calls.find(
      (c) =>
        c.path === '/v1/checkout/sessions' &&
        c.params.mode === 'subscription' &&
        metadataOf(c.params.subscription_data as Record<string, unknown>).workspace_id === ws.workspaceId,
    )!;
    expect(session.status).toBe(200);
    expect(session.params).toMatchObject({
      mode: 'subscription',
      customer: expect.stringMatching(/^cus_/),
      line_items: [
        {
          price_data: { currency: 'usd', unit_amount: 4900, recurring: { interval: 'month' }, product_data: { name: expect.any(String) } },
          quantity: 1,
        },
      ],
      subscription_data: { metadata: { workspace_id: ws.workspaceId, plan_id: 'starter' } },
    });
    // Nothing changes before Stripe says an invoice is paid.
    expect(await quota(ws)).toBe(1000);
    await fake.payCheckoutSession(created.body.checkout_id);
    await fake.settled();
    await until(async () => expect(await quota(ws)).toBe(50000));
    let body = await billing(ws);
    expect(body.plan.id).toBe('starter');
    const sub = body.subscription!;
    expect(sub).toMatchObject({
      id: expect.stringMatching(/^sub_/),
      plan_id: 'starter',
      status: 'active',
      cancel_at_period_end: false,
      scheduled_plan_id: null,
    });
    expect(new Date(sub.current_period_end!).getTime()).toBeGreaterThan(Date.now() + 27 * 86_400_000);
    const firstInvoices = await invoices(ws);
    expect(firstInvoices).toHaveLength(1);
    expect(firstInvoices[0]).toMatchObject({
      status: 'paid',
      amount_due: 4900,
      amount_paid: 4900,
      currency: 'usd',
      hosted_invoice_url: expect.stringContaining('/invoices/in_'),
    });

    // Upgrade: the price of the plan made once, the difference invoiced now; the quota when that invoice is paid.
    const up = await stack.api.post('/v1/billing/subscription', { headers: ws.auth, body: { plan_id: 'pro' } });
    expect(up.status).toBe(200);
    const upgrade = changeCalls(sub.id)[0];
    expect(upgrade.params).toMatchObject({
      items: [{ id: expect.stringMatching(/^si_/), price: expect.stringMatching(/^price_/) }],
      metadata: { plan_id: 'pro' },
      proration_behavior: 'always_invoice',
    });
    await fake.settled();
    await until(async () => expect(await quota(ws)).toBe(300000));
    expect((await billing(ws)).plan.id).toBe('pro');

    // Downgrade: no proration, scheduled; the quota stays until the next invoice is paid.
    const down = await stack.api.post('/v1/billing/subscription', { headers: ws.auth, body: { plan_id: 'starter' } });
    expect(down.status).toBe(200);
    expect(down.body).toMatchObject({ plan_id: 'pro', scheduled_plan_id: 'starter' });
    expect(changeCalls(sub.id)[1].params).toMatchObject({ metadata: { plan_id: 'starter' }, proration_behavior: 'none' });
    await fake.settled();
    expect(await quota(ws)).toBe(300000);
    fake.advanceSubscription(sub.id);
    await fake.settled();
    await until(async () => expect(await quota(ws)).toBe(50000));
    body = await billing(ws);
    expect(body.subscription).toMatchObject({ plan_id: 'starter', scheduled_plan_id: null, status: 'active' });

    // Cancel: at period end; free when Stripe says it ended.
    const cancelled = await stack.api.delete('/v1/billing/subscription', { headers: ws.auth });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ cancel_at_period_end: true, status: 'active' });
    expect(changeCalls(sub.id).at(-1)!.params).toEqual({ cancel_at_period_end: true });
    expect(await quota(ws)).toBe(50000);
    fake.advanceSubscription(sub.id);
    await fake.settled();
    await until(async () => expect(await quota(ws)).toBe(1000));
    body = await billing(ws);
    expect(body.plan.id).toBe('free');
    expect(body.subscription).toMatchObject({ status: 'canceled' });
    expect((await invoices(ws)).map((i) => i.status)).toEqual(['paid', 'paid', 'paid']);

    // Prices: one per plan, reused.
    const prices = fake.calls.filter((c) => c.method === 'POST' && c.path === '/v1/prices');
    expect(new Set(prices.map((c) => (c.params.metadata as Record<string, string>).plan_id)).size).toBe(prices.length);

    // Audited: the changes asked for and the plan changes the events made.
    const audit = await stack.api.get('/v1/audit-events', { headers: ws.auth });
    const actions = (audit.body as { action: string }[]).map((e) => e.action);
    for (const action of [
      'billing.subscription_checkout_created',
      'billing.subscription_changed',
      'billing.subscription_cancelled',
      'billing.plan_changed',
    ])
      expect(actions).toContain(action);
  });

  it('an upgrade followed at once by a downgrade keeps the upgrade until the next invoice', async () => {
    const ws = await stack.workspace({ credits: 1000 });
    const sub = await subscribe(ws);
    const up = await stack.api.post('/v1/billing/subscription', { headers: ws.auth, body: { plan_id: 'pro' } });
    const down = await stack.api.post('/v1/billing/subscription', { headers: ws.auth, body: { plan_id: 'starter' } });
    expect(up.status).toBe(200);
    expect(down.status).toBe(200);
    await fake.settled();
    await until(async () => expect(await quota(ws)).toBe(300000));
    expect((await billing(ws)).subscription).toMatchObject({ plan_id: 'pro', scheduled_plan_id: 'starter' });
    fake.advanceSubscription(sub.id);
    await fake.settled();
    await until(async () => expect(await quota(ws)).toBe(50000));
  });

  it('a downgrade taken back is not charged again', async () => {
    const ws = await stack.workspace({ credits: 1000 });
    const sub = await subscribe(ws, 'pro', 300000);
    const down = await stack.api.post('/v1/billing/subscription', { headers: ws.auth, body: { plan_id: 'starter' } });
    expect(down.body).toMatchObject({ plan_id: 'pro', scheduled_plan_id: 'starter' });
    const back = await stack.api.post('/v1/billing/subscription', { headers: ws.auth, body: { plan_id: 'pro' } });
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({ plan_id: 'pro', scheduled_plan_id: null });
    expect(changeCalls(sub.id).map((c) => c.params.proration_behavior)).toEqual(['none', 'none']);
    await fake.settled();
    expect(await invoices(ws)).toHaveLength(1);
    expect(await quota(ws)).toBe(300000);
  });

  it('the same plan again changes nothing; the portal opens for the customer', async () => {
    const ws = await stack.workspace({ credits: 1000 });
    const sub = await subscribe(ws);
    const again = await stack.api.post('/v1/billing/subscription', { headers: ws.auth, body: { plan_id: 'starter' } });
    expect(again.status).toBe(200);
    expect(changeCalls(sub.id)).toEqual([]);
    const portal = await stack.api.post('/v1/billing/portal', { headers: ws.auth, body: {} });
    expect(portal.status).toBe(201);
    expect(portal.body.url).toContain('/portal/bps_');
    const call = fake.calls.filter((c) => c.path === '/v1/billing_portal/sessions').at(-1)!;
    expect(call.params).toMatchObject({
      customer: expect.stringMatching(/^cus_/),
      return_url: `http://console.test/console/w/${ws.workspaceId}/billing`,
    });
  });
});

describe('Stripe events', () => {
  it('each event once: a replayed invoice.paid changes nothing', async () => {
    const ws = await stack.workspace({ credits: 1000 });
    await subscribe(ws);
    const paid = fake.events.filter((e) => e.type === 'invoice.paid').at(-1)!;
    const replay = await deliver(paid);
    expect(replay.status).toBe(200);
    expect(replay.body.outcome).toBe('duplicate');
    expect(await quota(ws)).toBe(50000);
    expect(await invoices(ws)).toHaveLength(1);
    const ledger = await stack.runtime.db
      .selectFrom('credit_ledger')
      .select('credits')
      .where('workspace_id', '=', ws.workspaceId)
      .where('entry_type', '=', 'plan_allowance')
      .execute();
    expect(ledger.map((r) => r.credits).reduce((a, b) => a + b, 0)).toBe(50000);
  });

  it('out of order: invoice.paid before its checkout.session.completed, and an older invoice after a newer one', async () => {
    const ws = await stack.workspace({ credits: 1000 });
    const res = await stack.api.post('/v1/billing/subscription', { headers: ws.auth, body: { plan_id: 'pro' } });
    fake.setWebhookUrl(null);
    let events: StripeEvent[];
    try {
      events = await fake.payCheckoutSession(res.body.checkout_id);
    } finally {
      fake.setWebhookUrl(`${stack.url!}${WEBHOOK}`);
    }
    const completed = events.find((e) => e.type === 'checkout.session.completed')!;
    const paid = events.find((e) => e.type === 'invoice.paid')!;
    expect((await deliver(paid)).body.outcome).toBe('handled');
    expect(await quota(ws)).toBe(300000);
    expect((await billing(ws)).subscription).toMatchObject({ plan_id: 'pro', status: 'active' });
    expect((await deliver(completed)).body.outcome).toBe('handled');
    expect((await billing(ws)).subscription).toMatchObject({ plan_id: 'pro', status: 'active' });

    // A later invoice (the next period, downgraded) first, then an older one's event arrives late: the last paid invoice wins.
    const sub = (await billing(ws)).subscription!;
    await stack.api.post('/v1/billing/subscription', { headers: ws.auth, body: { plan_id: 'starter' } });
    await fake.settled();
    fake.advanceSubscription(sub.id);
    await fake.settled();
    await until(async () => expect(await quota(ws)).toBe(50000));
    const older = structuredClone(paid);
    older.id = `${paid.id}_late`;
    expect((await deliver(older)).body.outcome).toBe('handled');
    expect(await quota(ws)).toBe(50000);
  });

  it('reads both invoice shapes: `subscription` (older API versions) and `parent.subscription_details.subscription`', async () => {
    const ws = await stack.workspace({ credits: 1000 });
    const sub = await subscribe(ws);
    const latest = fake.events.filter((e) => e.type === 'invoice.paid').at(-1)!;
    const object = structuredClone<Record<string, unknown>>(latest.data.object);
    const parent = object.parent as { subscription_details: { subscription: string; metadata: Record<string, string> } };
    expect(parent.subscription_details.subscription).toBe(sub.id);
    // The same subscription's invoice in the older shape, for the pro plan, made later.
    delete object.parent;
    Object.assign(object, {
      id: `${String(object.id)}_old`,
      subscription: sub.id,
      subscription_details: { metadata: { ...parent.subscription_details.metadata, plan_id: 'pro' } },
      created: (object.created as number) + 60,
    });
    expect((await deliver(fake.buildEvent('invoice.paid', object))).body.outcome).toBe('handled');
    expect(await quota(ws)).toBe(300000);
    expect((await invoices(ws)).map((i) => i.id)).toContain(`${String(latest.data.object.id)}_old`);
  });
});

describe('failed payments and the grace period', () => {
  it('a failed invoice makes the subscription past due, tells owners and admins, and a paid one within the grace keeps the plan', async () => {
    const ws = await stack.workspace({ credits: 1000 });
    const people = await watchBilling(ws);
    const sub = await subscribe(ws);
    fake.failNextInvoices(1);
    fake.advanceSubscription(sub.id);
    await fake.settled();
    await until(async () => expect((await billing(ws)).subscription!.status).toBe('past_due'));
    const failed = await stack.runtime.db
      .selectFrom('webhook_events')
      .select(['type'])
      .where('workspace_id', '=', ws.workspaceId)
      .where('type', '=', 'billing.invoice_payment_failed')
      .execute();
    expect(failed).toHaveLength(1);
    const mailed = await mailsTo('billing_invoice_payment_failed');
    expect(mailed).toEqual(expect.arrayContaining([people.owner, people.admin]));
    expect(mailed).not.toContain(people.viewer);
    expect(await quota(ws)).toBe(50000);
    const open = (await invoices(ws)).find((i) => i.status === 'open')!;
    expect(open).toBeDefined();
    fake.payInvoice(open.id);
    await fake.settled();
    await until(async () => expect((await billing(ws)).subscription!.status).toBe('active'));
    // The grace period's pass, long after: nothing to end.
    expect(await endGracePeriods(stack.runtime.services, new Date(Date.now() + 30 * 86_400_000))).toBe(0);
    expect(await quota(ws)).toBe(50000);
    expect((await billing(ws)).plan.id).toBe('starter');
  });

  it('with no invoice paid within PLAN_GRACE_DAYS the workspace falls to free (the pass as of an injected clock)', async () => {
    const ws = await stack.workspace({ credits: 1000 });
    await watchBilling(ws);
    const sub = await subscribe(ws);
    fake.failNextInvoices(1);
    fake.advanceSubscription(sub.id);
    await fake.settled();
    await until(async () => expect((await billing(ws)).subscription!.status).toBe('past_due'));
    const now = Date.now();
    await endGracePeriods(stack.runtime.services, new Date(now + 6 * 86_400_000));
    expect(await quota(ws)).toBe(50000);
    await endGracePeriods(stack.runtime.services, new Date(now + 8 * 86_400_000));
    expect(await quota(ws)).toBe(1000);
    expect((await billing(ws)).plan.id).toBe('free');
    const changed = await stack.runtime.db
      .selectFrom('webhook_events')
      .select('type')
      .where('workspace_id', '=', ws.workspaceId)
      .where('type', '=', 'billing.plan_changed')
      .execute();
    expect(changed.length).toBeGreaterThanOrEqual(2);
    // Ended once: a second pass changes nothing.
    expect(await endGracePeriods(stack.runtime.services, new Date(now + 9 * 86_400_000))).toBe(0);
    // Paid after all: the plan comes back.
    const open = (await invoices(ws)).find((i) => i.status === 'open')!;
    fake.payInvoice(open.id);
    await fake.settled();
    await until(async () => expect(await quota(ws)).toBe(50000));
  });
});

describe('plan limits', () => {
  it("apply on the next request: the plan's rate limit and active-job limit", async () => {
    const ws = await stack.workspace({ credits: 1000, rateLimitPerMinute: 600, maxActiveJobs: 200 });
    const before = await stack.api.get('/v1/account', { headers: ws.auth });
    expect(before.headers['ratelimit-limit']).toBe('600');
    await subscribe(ws);
    const after = await stack.api.get('/v1/account', { headers: ws.auth });
    expect(after.headers['ratelimit-limit']).toBe('700');
    expect(after.body).toMatchObject({ rate_limit_per_minute: 700, max_active_jobs: 30, monthly_quota: 50000 });
    const row = await stack.runtime.db
      .selectFrom('workspaces')
      .select(['rate_limit_per_minute', 'max_active_jobs'])
      .where('id', '=', ws.workspaceId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ rate_limit_per_minute: 700, max_active_jobs: 30 });
  });
});
