import Stripe from 'stripe';
import { type FakeStripe, objectProblems, startFakeStripe } from '../src';
import { packSession, stripeClient } from './helpers';

let fake: FakeStripe;
let stripe: Stripe;

beforeEach(async () => {
  fake = await startFakeStripe();
  stripe = stripeClient(fake);
});

afterEach(async () => {
  await fake.close();
});

async function refusal(call: Promise<unknown>): Promise<Stripe.errors.StripeError> {
  try {
    await call;
  } catch (error) {
    if (error instanceof Stripe.errors.StripeError) return error;
    throw error;
  }
  throw new Error('the call was accepted');
}

describe('fake Stripe API through the stripe package', () => {
  it('creates and retrieves a customer and a pack Checkout Session with the service parameters', async () => {
    const customer = await stripe.customers.create({ metadata: { workspace_id: 'ws_1' }, email: 'owner@example.com', name: 'Acme' });
    expect(customer).toMatchObject({
      object: 'customer',
      livemode: false,
      email: 'owner@example.com',
      name: 'Acme',
      metadata: { workspace_id: 'ws_1' },
    });
    expect(customer.id).toMatch(/^cus_/);
    expect(objectProblems('customer', customer)).toEqual([]);
    expect(await stripe.customers.retrieve(customer.id)).toEqual(customer);

    const session = await stripe.checkout.sessions.create(packSession(customer.id, 'ws_1'));
    expect(session.id).toMatch(/^cs_test_/);
    expect(session).toMatchObject({
      object: 'checkout.session',
      mode: 'payment',
      status: 'open',
      payment_status: 'unpaid',
      amount_total: 1000,
      currency: 'usd',
      customer: customer.id,
      client_reference_id: 'ws_1',
      metadata: { workspace_id: 'ws_1', pack_id: 'pack_10k' },
      payment_intent: null,
      url: `${fake.url}/checkout/${session.id}`,
    });
    expect(objectProblems('checkout.session', session)).toEqual([]);
    expect(await stripe.checkout.sessions.retrieve(session.id)).toEqual(session);

    const call = fake.calls.find((c) => c.method === 'POST' && c.path === '/v1/checkout/sessions')!;
    expect(call.status).toBe(200);
    expect(call.params).toMatchObject({
      line_items: [{ price_data: { unit_amount: 1000 }, quantity: 1 }],
      payment_intent_data: { setup_future_usage: 'off_session' },
    });
  });

  it.each([
    [
      'a misspelled nested parameter',
      { line_items: [{ price_data: { currency: 'usd', unitamount: 1000, product_data: { name: 'x' } }, quantity: 1 }] },
      'line_items[0][price_data][unitamount]',
      /unknown parameter/,
    ],
    ['metadata of the wrong shape', { metadata: 'ws_1' }, 'metadata', /Invalid object/],
    [
      'a value outside the enum',
      { payment_intent_data: { setup_future_usage: 'sometimes' } },
      'payment_intent_data[setup_future_usage]',
      /must be one of/,
    ],
    ['an unknown top-level parameter', { client_reference: 'ws_1' }, 'client_reference', /unknown parameter/],
    [
      'a string for an integer',
      { line_items: [{ price_data: { currency: 'usd', unit_amount: 'ten', product_data: { name: 'x' } }, quantity: 1 }] },
      'line_items[0][price_data][unit_amount]',
      /Invalid integer/,
    ],
  ])('refuses %s with 400 naming the parameter', async (_name, change, param, message) => {
    const customer = await stripe.customers.create({ metadata: { workspace_id: 'ws_1' } });
    const error = await refusal(
      stripe.checkout.sessions.create({ ...packSession(customer.id), ...change } as Stripe.Checkout.SessionCreateParams),
    );
    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(error.statusCode).toBe(400);
    expect(error.param).toBe(param);
    expect(error.message).toMatch(message);
    expect(fake.calls.at(-1)).toMatchObject({ path: '/v1/checkout/sessions', status: 400 });
    expect(fake.calls.filter((c) => c.path === '/v1/checkout/sessions')).toHaveLength(1);
  });

  it('answers 401 to a wrong key and 404 resource_missing to an unknown ID', async () => {
    const other = stripeClient(fake, 'sk_test_other');
    const denied = await refusal(other.customers.create({}));
    expect(denied).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    expect(denied.statusCode).toBe(401);

    const missing = await refusal(stripe.paymentIntents.retrieve('pi_nope'));
    expect(missing).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(missing).toMatchObject({ statusCode: 404, code: 'resource_missing', message: "No such payment_intent: 'pi_nope'" });
    const noCustomer = await refusal(stripe.checkout.sessions.create(packSession('cus_nope')));
    expect(noCustomer).toMatchObject({ statusCode: 400, code: 'resource_missing', param: 'customer' });
    const unknownQuery = await refusal(stripe.charges.retrieve('ch_x', { expandd: ['x'] } as Stripe.ChargeRetrieveParams));
    expect(unknownQuery).toMatchObject({ statusCode: 400, param: 'expandd' });
  });

  it('replays an Idempotency-Key with the same body and refuses it with another', async () => {
    const first = await stripe.customers.create({ metadata: { workspace_id: 'ws_1' } }, { idempotencyKey: 'customer-ws_1' });
    const again = await stripe.customers.create({ metadata: { workspace_id: 'ws_1' } }, { idempotencyKey: 'customer-ws_1' });
    expect(again).toEqual(first);
    expect(fake.calls.map((c) => c.idempotencyKey)).toEqual(['customer-ws_1', 'customer-ws_1']);
    const conflict = await refusal(stripe.customers.create({ metadata: { workspace_id: 'ws_2' } }, { idempotencyKey: 'customer-ws_1' }));
    expect(conflict).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
  });

  it('confirms an off-session PaymentIntent, or declines it with 402 and the PaymentIntent', async () => {
    const customer = await stripe.customers.create({ metadata: { workspace_id: 'ws_1' } });
    const session = await stripe.checkout.sessions.create(packSession(customer.id, 'ws_1'));
    await fake.payCheckoutSession(session.id);
    const paid = await stripe.checkout.sessions.retrieve(session.id, { expand: ['payment_intent'] });
    const checkoutIntent = paid.payment_intent as Stripe.PaymentIntent;
    const method = await stripe.paymentMethods.retrieve(checkoutIntent.payment_method as string);
    expect(method.card).toMatchObject({ brand: 'visa', last4: '4242' });
    expect(method.customer).toBe(customer.id);
    expect(objectProblems('payment_method', method)).toEqual([]);
    expect(fake.paymentIntentsCreated()).toBe(0);

    const params: Stripe.PaymentIntentCreateParams = {
      amount: 1000,
      currency: 'usd',
      customer: customer.id,
      payment_method: method.id,
      confirm: true,
      off_session: true,
      metadata: { workspace_id: 'ws_1', pack_id: 'pack_10k', kind: 'auto_recharge', payment_id: 'pay_1' },
    };
    const before = fake.events.length;
    const intent = await stripe.paymentIntents.create(params, { idempotencyKey: 'recharge-1' });
    expect(intent).toMatchObject({
      status: 'succeeded',
      amount: 1000,
      amount_received: 1000,
      currency: 'usd',
      customer: customer.id,
      payment_method: method.id,
      last_payment_error: null,
    });
    expect(intent.metadata).toEqual(params.metadata);
    expect(objectProblems('payment_intent', intent)).toEqual([]);
    const charge = await stripe.charges.retrieve(intent.latest_charge as string);
    expect(charge).toMatchObject({
      amount: 1000,
      amount_refunded: 0,
      refunded: false,
      payment_intent: intent.id,
      currency: 'usd',
      status: 'succeeded',
    });
    expect(objectProblems('charge', charge)).toEqual([]);
    expect(fake.events.slice(before).map((e) => e.type)).toEqual(['payment_intent.succeeded', 'charge.succeeded']);
    expect(fake.events[before].data.object).toMatchObject({ id: intent.id, metadata: { kind: 'auto_recharge' } });
    expect(fake.events[before].request).toEqual({ id: expect.stringMatching(/^req_/), idempotency_key: 'recharge-1' });
    expect(await stripe.paymentIntents.create(params, { idempotencyKey: 'recharge-1' })).toEqual(intent);
    expect(fake.paymentIntentsCreated()).toBe(1);

    fake.declinePaymentMethod(method.id);
    const declined = await refusal(stripe.paymentIntents.create(params, { idempotencyKey: 'recharge-2' }));
    expect(declined).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect(declined).toMatchObject({ statusCode: 402, type: 'StripeCardError', code: 'card_declined', decline_code: 'insufficient_funds' });
    const failedIntent = declined.payment_intent!;
    expect(failedIntent).toMatchObject({ status: 'requires_payment_method', metadata: { kind: 'auto_recharge' } });
    expect(failedIntent.last_payment_error).toMatchObject({
      code: 'card_declined',
      decline_code: 'insufficient_funds',
      type: 'card_error',
    });
    expect(objectProblems('payment_intent', failedIntent)).toEqual([]);
    expect(fake.events.at(-1)).toMatchObject({ type: 'payment_intent.payment_failed', data: { object: { id: failedIntent.id } } });
    expect(fake.paymentIntentsCreated()).toBe(2);
  });

  it('fails the next N confirmations when told to', async () => {
    const customer = await stripe.customers.create({});
    const session = await stripe.checkout.sessions.create(packSession(customer.id));
    await fake.payCheckoutSession(session.id);
    const intentId = (await stripe.checkout.sessions.retrieve(session.id)).payment_intent as string;
    const method = (await stripe.paymentIntents.retrieve(intentId)).payment_method as string;
    fake.failNextPaymentIntents(1);
    const params = { amount: 9000, currency: 'usd', customer: customer.id, payment_method: method, confirm: true, off_session: true };
    expect((await refusal(stripe.paymentIntents.create(params))).statusCode).toBe(402);
    expect((await stripe.paymentIntents.create(params)).status).toBe('succeeded');
  });

  it('refunds part then the rest of a charge, each with a charge.refunded event', async () => {
    const customer = await stripe.customers.create({});
    const session = await stripe.checkout.sessions.create(packSession(customer.id));
    await fake.payCheckoutSession(session.id);
    const intentId = (await stripe.checkout.sessions.retrieve(session.id)).payment_intent as string;
    const partial = await stripe.refunds.create({ payment_intent: intentId, amount: 400 });
    expect(partial).toMatchObject({ object: 'refund', amount: 400, payment_intent: intentId, status: 'succeeded' });
    expect(partial.id).toMatch(/^re_/);
    expect(objectProblems('refund', partial)).toEqual([]);
    const full = await fake.refund(intentId);
    const refunds = fake.events.filter((e) => e.type === 'charge.refunded');
    expect(refunds.map((e) => [e.data.object.amount_refunded, e.data.object.refunded])).toEqual([
      [400, false],
      [1000, true],
    ]);
    expect(full).toBe(refunds[1]);
    const charge = await stripe.charges.retrieve(partial.charge as string);
    expect(charge).toMatchObject({ amount: 1000, amount_refunded: 1000, refunded: true });
    const again = await refusal(stripe.refunds.create({ payment_intent: intentId }));
    expect(again).toMatchObject({ statusCode: 400, code: 'charge_already_refunded' });
  });
});
