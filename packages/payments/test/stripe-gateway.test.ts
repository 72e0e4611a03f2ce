import { type FakeStripe, startFakeStripe, type StripeEvent } from '@sdx/fake-stripe';
import { PaymentFailed } from '@sdx/domain/testing';
import { createStripeGateway, type StripeGateway } from '../src';

/**
 * The gateway against the fake Stripe (which checks every call's parameters against Stripe's
 * OpenAPI description and signs events as Stripe does): each call the domain makes, the events it
 * receives read in the service's terms in both invoice shapes, and Stripe's failures by kind. The
 * billing flows themselves are tested through the API (apps/api/test/billing-*.test.ts).
 */
let fake: FakeStripe;
let gateway: StripeGateway;

beforeEach(async () => {
  fake = await startFakeStripe({ webhookUrl: null });
  gateway = createStripeGateway({ stripeSecretKey: fake.secretKey, stripeWebhookSecret: fake.webhookSecret, stripeApiBase: fake.url })!;
});

afterEach(async () => {
  await fake.close();
});

/** An event as the webhook receives it: the exact bytes and their signature, verified. */
function received(event: StripeEvent) {
  const payload = JSON.stringify(event);
  return gateway.verifyEvent(Buffer.from(payload), fake.sign(payload), 300);
}

const only = (events: StripeEvent[], type: string): StripeEvent => {
  const found = events.filter((e) => e.type === type);
  expect(found).toHaveLength(1);
  return found[0];
};

async function paidPack(workspaceId = 'ws_1') {
  const customerId = await gateway.createCustomer({ workspaceId, idempotencyKey: `customer-${workspaceId}` });
  const checkout = await gateway.createPackCheckout({
    customerId,
    workspaceId,
    item: { name: '10,000 credits', amount: 1000, currency: 'usd' },
    metadata: { workspace_id: workspaceId, pack_id: 'pack_10k', payment_id: 'pay_1' },
    successUrl: 'http://app.test/ok',
    cancelUrl: 'http://app.test/cancelled',
    idempotencyKey: 'checkout-pay_1',
  });
  const events = await fake.payCheckoutSession(checkout.id, { card: { brand: 'visa', last4: '4242' } });
  return { customerId, checkout, events };
}

describe('StripeGateway', () => {
  it('is not built without both STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET', () => {
    expect(createStripeGateway({ stripeSecretKey: 'sk_test_x', stripeWebhookSecret: null, stripeApiBase: null })).toBeNull();
    expect(createStripeGateway({ stripeSecretKey: null, stripeWebhookSecret: 'whsec_x', stripeApiBase: null })).toBeNull();
  });

  it('a pack checkout: one customer per idempotency key, the paid session read as a paid checkout, the card it used', async () => {
    const { customerId, checkout, events } = await paidPack();
    expect(await gateway.createCustomer({ workspaceId: 'ws_1', idempotencyKey: 'customer-ws_1' })).toBe(customerId);
    expect(checkout.url).toMatch(/^http/);
    const event = received(only(events, 'checkout.session.completed'));
    expect(event).toMatchObject({ type: 'checkout.session.completed', kind: 'checkout' });
    if (event.kind !== 'checkout') throw new Error('not a checkout');
    expect(event.checkout).toMatchObject({
      id: checkout.id,
      mode: 'payment',
      paid: true,
      customerId,
      subscriptionId: null,
      amount: 1000,
      currency: 'usd',
      metadata: { workspace_id: 'ws_1', pack_id: 'pack_10k', payment_id: 'pay_1' },
      reference: 'ws_1',
    });
    expect(event.checkout.createdAt).toBeInstanceOf(Date);
    const card = await gateway.cardOfPayment(event.checkout.paymentIntentId!);
    expect(card).toMatchObject({ brand: 'visa', last4: '4242', paymentMethodId: expect.stringMatching(/^pm_/) });
    // The PaymentIntent carries the checkout's metadata (auto-recharge's events are found by it).
    const succeeded = received(only(events, 'payment_intent.succeeded'));
    expect(succeeded).toMatchObject({
      kind: 'payment',
      payment: {
        id: event.checkout.paymentIntentId,
        amount: 1000,
        currency: 'usd',
        metadata: { payment_id: 'pay_1' },
        failureMessage: null,
      },
    });
  });

  it('refunds and disputes, read by their PaymentIntent', async () => {
    const { events } = await paidPack();
    const intentId = (only(events, 'payment_intent.succeeded').data.object as { id: string }).id;
    expect(received(await fake.refund(intentId, 400))).toMatchObject({
      type: 'charge.refunded',
      kind: 'refund',
      refund: { paymentIntentId: intentId, amountRefunded: 400 },
    });
    const created = received(await fake.dispute(intentId));
    expect(created).toMatchObject({
      type: 'charge.dispute.created',
      kind: 'dispute',
      dispute: { paymentIntentId: intentId, status: 'needs_response' },
    });
    if (created.kind !== 'dispute') throw new Error('not a dispute');
    expect(received(await fake.closeDispute(created.dispute.id, 'won'))).toMatchObject({
      kind: 'dispute',
      dispute: { id: created.dispute.id, status: 'won' },
    });
  });

  it('an off-session charge of the saved card; a declined card is a card failure naming its PaymentIntent', async () => {
    const { customerId, events } = await paidPack();
    const intentId = (only(events, 'payment_intent.succeeded').data.object as { id: string }).id;
    const card = (await gateway.cardOfPayment(intentId))!;
    const charge = {
      amount: 1000,
      currency: 'usd',
      customerId,
      paymentMethodId: card.paymentMethodId,
      metadata: { kind: 'auto_recharge', payment_id: 'pay_2' },
    };
    const charged = await gateway.chargeSavedCard({ ...charge, idempotencyKey: 'pay_2' });
    expect(charged).toMatchObject({ id: expect.stringMatching(/^pi_/), status: 'succeeded' });
    fake.declinePaymentMethod(card.paymentMethodId);
    const declined = await gateway.chargeSavedCard({ ...charge, idempotencyKey: 'pay_3' }).catch((error: unknown) => error);
    expect(declined).toBeInstanceOf(PaymentFailed);
    expect(declined).toMatchObject({ kind: 'card', paymentIntentId: expect.stringMatching(/^pi_/) });
  });

  it('a subscription: its checkout, the first invoice in the newer shape, a price change and a cancellation', async () => {
    const customerId = await gateway.createCustomer({ workspaceId: 'ws_2', idempotencyKey: 'customer-ws_2' });
    const checkout = await gateway.createSubscriptionCheckout({
      customerId,
      item: { name: 'Starter plan', amount: 4900, currency: 'usd' },
      metadata: { workspace_id: 'ws_2', plan_id: 'starter' },
      successUrl: 'http://app.test/ok',
      cancelUrl: 'http://app.test/cancelled',
      idempotencyKey: 'subscription-checkout-1',
    });
    const events = await fake.payCheckoutSession(checkout.id);
    const completed = received(only(events, 'checkout.session.completed'));
    if (completed.kind !== 'checkout') throw new Error('not a checkout');
    expect(completed.checkout).toMatchObject({ mode: 'subscription', paid: true, subscriptionId: expect.stringMatching(/^sub_/) });
    const subscriptionId = completed.checkout.subscriptionId!;
    const paid = received(only(events, 'invoice.paid'));
    expect(paid).toMatchObject({
      kind: 'invoice',
      invoice: { subscriptionId, subscriptionMetadata: { plan_id: 'starter' }, status: 'paid', amountPaid: 4900, currency: 'usd' },
    });
    if (paid.kind !== 'invoice') throw new Error('not an invoice');
    expect(paid.invoice.periodEnd!.getTime() - paid.invoice.periodStart!.getTime()).toBeGreaterThanOrEqual(28 * 86_400_000);

    const subscription = await gateway.subscription(subscriptionId);
    expect(subscription).toMatchObject({
      id: subscriptionId,
      status: 'active',
      itemId: expect.stringMatching(/^si_/),
      cancelAtPeriodEnd: false,
      metadata: { workspace_id: 'ws_2', plan_id: 'starter' },
    });
    expect(subscription.currentPeriodEnd!.getTime()).toBeGreaterThan(Date.now());

    const priceId = await gateway.createMonthlyPrice({
      item: { name: 'Pro plan', amount: 19900, currency: 'usd' },
      metadata: { plan_id: 'pro' },
      idempotencyKey: 'price-pro',
    });
    const changed = await gateway.changeSubscriptionPrice(subscriptionId, {
      itemId: subscription.itemId!,
      priceId,
      metadata: { plan_id: 'pro' },
      proration: 'always_invoice',
      idempotencyKey: 'change-1',
    });
    expect(changed).toMatchObject({ id: subscriptionId, itemId: subscription.itemId, metadata: { plan_id: 'pro' } });
    expect(fake.subscription(subscriptionId)!.items.data[0].price).toMatchObject({ id: priceId, unit_amount: 19900 });
    const cancelled = await gateway.cancelAtPeriodEnd(subscriptionId, 'cancel-1');
    expect(cancelled).toMatchObject({ cancelAtPeriodEnd: true, currentPeriodEnd: subscription.currentPeriodEnd });
    expect(await gateway.createPortalSession({ customerId, returnUrl: 'http://app.test/billing' })).toMatch(/^http/);
  });

  it("reads the older API versions' shapes: an invoice's `subscription` and `subscription_details`, the period on the subscription", () => {
    const invoice = received(
      fake.buildEvent('invoice.paid', {
        id: 'in_old',
        object: 'invoice',
        subscription: 'sub_old',
        subscription_details: { metadata: { plan_id: 'pro', workspace_id: 'ws_3' } },
        status: 'paid',
        number: 'OLD-1',
        amount_due: 19900,
        amount_paid: 19900,
        currency: 'USD',
        period_start: 1_700_000_000,
        period_end: 1_702_592_000,
        lines: { data: [] },
        hosted_invoice_url: null,
        created: 1_700_000_000,
      }),
    );
    expect(invoice).toMatchObject({
      kind: 'invoice',
      invoice: {
        id: 'in_old',
        subscriptionId: 'sub_old',
        subscriptionMetadata: { plan_id: 'pro', workspace_id: 'ws_3' },
        currency: 'usd',
        periodStart: new Date(1_700_000_000_000),
        createdAt: new Date(1_700_000_000_000),
      },
    });
    const updated = received(
      fake.buildEvent('customer.subscription.updated', {
        id: 'sub_old',
        object: 'subscription',
        status: 'unpaid',
        current_period_end: 1_702_592_000,
        cancel_at_period_end: true,
        metadata: {},
        items: { data: [] },
        created: 0,
      }),
    );
    expect(updated).toMatchObject({
      kind: 'subscription',
      subscription: {
        id: 'sub_old',
        status: 'past_due',
        itemId: null,
        currentPeriodEnd: new Date(1_702_592_000_000),
        cancelAtPeriodEnd: true,
        createdAt: null,
      },
    });
    expect(received(fake.buildEvent('customer.created', { id: 'cus_1', object: 'customer' }))).toMatchObject({
      type: 'customer.created',
      kind: 'other',
    });
  });

  it('refuses a wrong or stale signature', () => {
    const payload = JSON.stringify(fake.buildEvent('invoice.paid', { id: 'in_1', object: 'invoice' }));
    expect(() => gateway.verifyEvent(Buffer.from(payload), fake.sign(payload, undefined, 'whsec_other'), 300)).toThrow();
    expect(() => gateway.verifyEvent(Buffer.from(payload), fake.sign(payload, Math.floor(Date.now() / 1000) - 301), 300)).toThrow();
    expect(() => gateway.verifyEvent(Buffer.from(`${payload} `), fake.sign(payload), 300)).toThrow();
  });

  it('a refused request is `refused`, an unreachable Stripe `transient`', async () => {
    const wrongKey = createStripeGateway({
      stripeSecretKey: 'sk_test_wrong',
      stripeWebhookSecret: fake.webhookSecret,
      stripeApiBase: fake.url,
    })!;
    await expect(wrongKey.createCustomer({ workspaceId: 'ws_4', idempotencyKey: 'customer-ws_4' })).rejects.toMatchObject({
      name: 'PaymentFailed',
      kind: 'refused',
    });
    const down = createStripeGateway({
      stripeSecretKey: fake.secretKey,
      stripeWebhookSecret: fake.webhookSecret,
      stripeApiBase: 'http://127.0.0.1:9',
    })!;
    await expect(down.subscription('sub_1')).rejects.toMatchObject({ name: 'PaymentFailed', kind: 'transient' });
  });
});
