import Stripe from 'stripe';
import { type FakeStripe, objectProblems, startFakeStripe } from '../src';
import { packSession, type Receiver, startReceiver, stripeClient } from './helpers';

let fake: FakeStripe;
let stripe: Stripe;
let receiver: Receiver;

beforeEach(async () => {
  receiver = await startReceiver();
  fake = await startFakeStripe({ webhookUrl: receiver.url, retryDelaysMs: [50, 100] });
  stripe = stripeClient(fake);
});

afterEach(async () => {
  await fake.close();
  await receiver.close();
});

async function paidSession(options?: Parameters<FakeStripe['payCheckoutSession']>[1]) {
  const customer = await stripe.customers.create({ metadata: { workspace_id: 'ws_1' } });
  const session = await stripe.checkout.sessions.create(packSession(customer.id, 'ws_1'));
  const events = await fake.payCheckoutSession(session.id, options);
  await fake.settled();
  return { customer, session, events };
}

describe('fake Stripe webhooks', () => {
  it('delivers checkout.session.completed signed so that stripe.webhooks.constructEvent accepts it', async () => {
    const { session, events } = await paidSession();
    expect(events.map((e) => e.type)).toEqual(['checkout.session.completed', 'payment_intent.succeeded', 'charge.succeeded']);
    expect(receiver.received).toHaveLength(3);

    const first = receiver.received[0];
    expect(first.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(first.headers['user-agent']).toMatch(/^Stripe\/1\.0/);
    const event = stripe.webhooks.constructEvent(first.body, first.headers['stripe-signature'] as string, fake.webhookSecret, 300);
    expect(event.type).toBe('checkout.session.completed');
    expect(event.id).toBe(events[0].id);
    expect(event).toMatchObject({
      object: 'event',
      livemode: false,
      pending_webhooks: 1,
      api_version: expect.any(String),
      request: { id: null, idempotency_key: null },
    });
    expect(objectProblems('event', event)).toEqual([]);
    const completed = event.data.object as Stripe.Checkout.Session;
    expect(completed).toMatchObject({
      id: session.id,
      status: 'complete',
      payment_status: 'paid',
      amount_total: 1000,
      currency: 'usd',
      client_reference_id: 'ws_1',
      metadata: { workspace_id: 'ws_1', pack_id: 'pack_10k' },
    });
    expect(completed.payment_intent).toMatch(/^pi_/);

    const intentEvent = stripe.webhooks.constructEvent(
      receiver.received[1].body,
      receiver.received[1].headers['stripe-signature'] as string,
      fake.webhookSecret,
      300,
    );
    const intent = intentEvent.data.object as Stripe.PaymentIntent;
    expect(intent).toMatchObject({
      id: completed.payment_intent,
      status: 'succeeded',
      metadata: { workspace_id: 'ws_1', pack_id: 'pack_10k' },
    });
    expect(intent.metadata.kind).toBeUndefined();
    expect(fake.deliveries).toEqual(events.map((e) => ({ eventId: e.id, attempt: 1, status: 200, at: expect.any(Number) })));
  });

  it('signs so that a tampered body, a stale timestamp or another secret is refused', async () => {
    await paidSession();
    const { body, headers } = receiver.received[0];
    const header = headers['stripe-signature'] as string;
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(header).toBe(fake.sign(body, Number(/t=(\d+)/.exec(header)![1])));
    const verify =
      (payload: string, signature: string, secret = fake.webhookSecret) =>
      () =>
        stripe.webhooks.constructEvent(payload, signature, secret, 300);
    expect(verify(body.replace('"paid"', '"unpaid"'), header)).toThrow(Stripe.errors.StripeSignatureVerificationError);
    expect(verify(body, fake.sign(body, Math.floor(Date.now() / 1000) - 600))).toThrow(/Timestamp outside the tolerance zone/);
    expect(verify(body, header, 'whsec_other')).toThrow(Stripe.errors.StripeSignatureVerificationError);
    expect(verify(body, fake.sign(body))).not.toThrow();
  });

  it('retries a delivery the receiver answered with 500, each copy signed', async () => {
    receiver.answers.push(500, 503);
    const { events } = await paidSession();
    const first = events[0].id;
    const attempts = fake.deliveries.filter((d) => d.eventId === first);
    expect(attempts).toMatchObject([
      { eventId: first, attempt: 1, status: 500 },
      { eventId: first, attempt: 2, status: 200 },
    ]);
    expect(attempts[1].at - attempts[0].at).toBeGreaterThanOrEqual(45);
    const second = events[1].id;
    expect(fake.deliveries.filter((d) => d.eventId === second).map((d) => d.status)).toEqual([503, 200]);
    const copies = receiver.received.filter((r) => JSON.parse(r.body).id === first);
    expect(copies).toHaveLength(2);
    for (const copy of copies)
      expect(() =>
        stripe.webhooks.constructEvent(copy.body, copy.headers['stripe-signature'] as string, fake.webhookSecret, 300),
      ).not.toThrow();
  });

  it('gives up after the last retry, and records network errors', async () => {
    receiver.answers.push(500, 500, 500);
    const customer = await stripe.customers.create({});
    const event = fake.buildEvent('customer.updated', customer as unknown as Record<string, unknown>);
    fake.emit(event);
    await fake.settled();
    expect(fake.deliveries.map((d) => d.status)).toEqual([500, 500, 500]);
    expect(fake.events).toContain(event);

    fake.setWebhookUrl('http://127.0.0.1:1/unreachable');
    fake.emit(fake.buildEvent('customer.updated', customer as unknown as Record<string, unknown>));
    await fake.settled();
    const failed = fake.deliveries.slice(3);
    expect(failed).toHaveLength(3);
    expect(failed.every((d) => d.status === null && typeof d.error === 'string')).toBe(true);
  });

  it('pays with an overridden amount, and asynchronously (completed unpaid, then async_payment_succeeded)', async () => {
    const mismatch = await paidSession({ amountTotal: 999, currency: 'eur' });
    expect(mismatch.events[0].data.object).toMatchObject({ amount_total: 999, currency: 'eur', payment_status: 'paid' });

    const later = await paidSession({ async: true, card: { brand: 'mastercard', last4: '4444' } });
    expect(later.events.map((e) => e.type)).toEqual([
      'checkout.session.completed',
      'payment_intent.succeeded',
      'charge.succeeded',
      'checkout.session.async_payment_succeeded',
    ]);
    expect(later.events[0].data.object).toMatchObject({ status: 'complete', payment_status: 'unpaid' });
    expect(later.events[3].data.object).toMatchObject({ payment_status: 'paid' });
    const intent = await stripe.paymentIntents.retrieve(later.events[0].data.object.payment_intent as string, {
      expand: ['payment_method'],
    });
    expect((intent.payment_method as Stripe.PaymentMethod).card).toMatchObject({ brand: 'mastercard', last4: '4444' });
    const types = receiver.received.map((r) => JSON.parse(r.body).type);
    expect(types.slice(-4)).toEqual(later.events.map((e) => e.type));
  });

  it('records events without delivering them while no webhook URL is set', async () => {
    fake.setWebhookUrl(null);
    const { events } = await paidSession();
    expect(events).toHaveLength(3);
    expect(events[0].pending_webhooks).toBe(0);
    expect(receiver.received).toHaveLength(0);
    expect(fake.deliveries).toHaveLength(0);
  });
});
