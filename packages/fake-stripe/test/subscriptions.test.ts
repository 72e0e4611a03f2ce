import type Stripe from 'stripe';
import { type FakeStripe, startFakeStripe } from '../src';
import { stripeClient } from './helpers';

/**
 * Subscriptions in the fake, through the `stripe` package as the service calls it (extensions-3.md
 * 2): a subscription Checkout paid, a Price made and a price change with and without proration,
 * the next period with a failed and then a paid invoice, the portal, a cancellation at period
 * end; the events in the order a real account sends them.
 */
let fake: FakeStripe;
let stripe: Stripe;

beforeEach(async () => {
  fake = await startFakeStripe();
  stripe = stripeClient(fake);
});

afterEach(async () => {
  await fake.close();
});

const types = (events: { type: string }[]) => events.map((e) => e.type);

async function subscribed(): Promise<{ customer: string; subscription: Stripe.Subscription }> {
  const customer = await stripe.customers.create({ metadata: { workspace_id: 'ws_1' } });
  const session = await stripe.checkout.sessions.create({
    mode: 'subscription',
    customer: customer.id,
    line_items: [
      {
        price_data: { currency: 'usd', unit_amount: 4900, recurring: { interval: 'month' }, product_data: { name: 'Starter plan' } },
        quantity: 1,
      },
    ],
    subscription_data: { metadata: { workspace_id: 'ws_1', plan_id: 'starter' } },
    success_url: 'http://app.test/billing?subscription=success',
    cancel_url: 'http://app.test/billing',
  });
  expect(session).toMatchObject({ mode: 'subscription', status: 'open', subscription: null });
  const events = await fake.payCheckoutSession(session.id);
  expect(types(events)).toEqual([
    'customer.subscription.created',
    'invoice.created',
    'invoice.finalized',
    'invoice.paid',
    'invoice.payment_succeeded',
    'checkout.session.completed',
  ]);
  const completed = events.at(-1)!.data.object as unknown as Stripe.Checkout.Session;
  expect(completed).toMatchObject({ status: 'complete', payment_status: 'paid', subscription: expect.stringMatching(/^sub_/) });
  const subscription = await stripe.subscriptions.retrieve(completed.subscription as string);
  return { customer: customer.id, subscription };
}

describe('subscriptions through the stripe package', () => {
  it('a subscription Checkout starts a monthly subscription whose first invoice is paid, in the new invoice shape', async () => {
    const { subscription } = await subscribed();
    expect(subscription).toMatchObject({
      object: 'subscription',
      status: 'active',
      cancel_at_period_end: false,
      metadata: { workspace_id: 'ws_1', plan_id: 'starter' },
    });
    const item = subscription.items.data[0];
    expect(item.price).toMatchObject({ unit_amount: 4900, currency: 'usd', recurring: { interval: 'month' } });
    expect(item.current_period_end - item.current_period_start).toBeGreaterThanOrEqual(28 * 86_400);
    const paid = fake.events.find((e) => e.type === 'invoice.paid')!.data.object;
    expect(paid).toMatchObject({
      status: 'paid',
      amount_paid: 4900,
      parent: { subscription_details: { subscription: subscription.id, metadata: { plan_id: 'starter' } } },
    });
    expect(paid.subscription).toBeUndefined();
    const invoice = await stripe.invoices.retrieve(paid.id as string);
    expect(invoice.hosted_invoice_url).toContain(`/invoices/${invoice.id}`);
  });

  it('a price change with always_invoice invoices the prorated difference at once; with none it only changes the price', async () => {
    const { subscription } = await subscribed();
    const pro = await stripe.prices.create({
      currency: 'usd',
      unit_amount: 19900,
      recurring: { interval: 'month' },
      product_data: { name: 'Pro plan' },
      metadata: { plan_id: 'pro' },
    });
    expect(pro).toMatchObject({ object: 'price', type: 'recurring', unit_amount: 19900 });
    const before = fake.events.length;
    const item = subscription.items.data[0].id;
    const upgraded = await stripe.subscriptions.update(subscription.id, {
      items: [{ id: item, price: pro.id }],
      metadata: { plan_id: 'pro' },
      proration_behavior: 'always_invoice',
    });
    expect(upgraded.items.data[0].price.id).toBe(pro.id);
    const upgradeEvents = fake.events.slice(before);
    expect(types(upgradeEvents)).toEqual([
      'customer.subscription.updated',
      'invoice.created',
      'invoice.finalized',
      'invoice.paid',
      'invoice.payment_succeeded',
    ]);
    const proration = upgradeEvents.find((e) => e.type === 'invoice.paid')!.data.object;
    expect(proration.amount_paid as number).toBeGreaterThan(14_000);
    expect(proration.amount_paid as number).toBeLessThanOrEqual(15_000);
    expect(proration).toMatchObject({
      billing_reason: 'subscription_update',
      parent: { subscription_details: { metadata: { plan_id: 'pro' } } },
    });

    const starter = await stripe.prices.create({
      currency: 'usd',
      unit_amount: 4900,
      recurring: { interval: 'month' },
      product_data: { name: 'Starter plan' },
    });
    const mark = fake.events.length;
    await stripe.subscriptions.update(subscription.id, {
      items: [{ id: item, price: starter.id }],
      metadata: { plan_id: 'starter' },
      proration_behavior: 'none',
    });
    expect(types(fake.events.slice(mark))).toEqual(['customer.subscription.updated']);
    await expect(stripe.subscriptions.update(subscription.id, { items: [{ id: 'si_nope', price: starter.id }] })).rejects.toThrow(
      /No such subscription item/,
    );
  });

  it('the next period: a failed invoice makes it past due, paying it makes it active; cancelled at period end, it ends', async () => {
    const { customer, subscription } = await subscribed();
    fake.failNextInvoices(1);
    const failed = fake.advanceSubscription(subscription.id);
    expect(types(failed)).toEqual([
      'customer.subscription.updated',
      'invoice.created',
      'invoice.finalized',
      'invoice.payment_failed',
      'customer.subscription.updated',
    ]);
    const open = failed.find((e) => e.type === 'invoice.payment_failed')!.data.object;
    expect(open).toMatchObject({ status: 'open', billing_reason: 'subscription_cycle' });
    expect(open.created as number).toBeGreaterThan(Math.floor(Date.now() / 1000) + 27 * 86_400);
    expect((await stripe.subscriptions.retrieve(subscription.id)).status).toBe('past_due');
    expect(types(fake.payInvoice(open.id as string))).toEqual([
      'invoice.paid',
      'invoice.payment_succeeded',
      'customer.subscription.updated',
    ]);
    expect((await stripe.subscriptions.retrieve(subscription.id)).status).toBe('active');

    const portal = await stripe.billingPortal.sessions.create({ customer, return_url: 'http://app.test/billing' });
    expect(portal).toMatchObject({ object: 'billing_portal.session', customer, return_url: 'http://app.test/billing' });
    expect(portal.url).toContain('/portal/bps_');

    const cancelled = await stripe.subscriptions.update(subscription.id, { cancel_at_period_end: true });
    expect(cancelled.cancel_at_period_end).toBe(true);
    expect(types(fake.advanceSubscription(subscription.id))).toEqual(['customer.subscription.deleted']);
    expect((await stripe.subscriptions.retrieve(subscription.id)).status).toBe('canceled');
  });

  it('refuses a subscription line item without a recurring price, and an unknown price', async () => {
    const customer = await stripe.customers.create({});
    await expect(
      stripe.checkout.sessions.create({
        mode: 'subscription',
        customer: customer.id,
        line_items: [{ price_data: { currency: 'usd', unit_amount: 4900, product_data: { name: 'x' } }, quantity: 1 }],
        success_url: 'http://app.test/',
      }),
    ).rejects.toThrow(/recurring/);
    const { subscription } = await subscribed();
    await expect(
      stripe.subscriptions.update(subscription.id, { items: [{ id: subscription.items.data[0].id, price: 'price_nope' }] }),
    ).rejects.toThrow(/No such price/);
  });
});
