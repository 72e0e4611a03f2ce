import type Stripe from 'stripe';
import { type FakeStripe, startFakeStripe } from '../src';
import { packSession, page, type Receiver, startReceiver, stripeClient } from './helpers';

let fake: FakeStripe;
let stripe: Stripe;
let receiver: Receiver;

beforeEach(async () => {
  receiver = await startReceiver();
  fake = await startFakeStripe({ webhookUrl: receiver.url, retryDelaysMs: [50] });
  stripe = stripeClient(fake);
});

afterEach(async () => {
  await fake.close();
  await receiver.close();
});

describe('fake Stripe hosted Checkout page', () => {
  it('shows the line item, pays on a plain form POST and redirects to success_url', async () => {
    const customer = await stripe.customers.create({});
    const session = await stripe.checkout.sessions.create(packSession(customer.id, 'ws_1'));
    const shown = await page(session.url!);
    expect(shown.status).toBe(200);
    expect(shown.text).toContain('10,000 credits');
    expect(shown.text).toContain('$10.00');
    expect(shown.text).toContain(`action="/checkout/${session.id}/pay"`);
    expect(shown.text).toContain('href="http://app.test/console/billing"');

    const paid = await page(`${session.url}/pay`, 'POST');
    expect(paid.status).toBe(303);
    expect(paid.location).toBe(`http://app.test/console/billing?checkout=${session.id}`);
    expect(await stripe.checkout.sessions.retrieve(session.id)).toMatchObject({ status: 'complete', payment_status: 'paid' });
    await fake.settled();
    const completed = receiver.received.map((r) => JSON.parse(r.body)).find((e) => e.type === 'checkout.session.completed');
    expect(completed.data.object).toMatchObject({ id: session.id, payment_status: 'paid' });

    const after = await page(session.url!);
    expect(after.text).toContain('Paid');
    expect(after.text).toContain(`action="/checkout/${session.id}/refund"`);
    const again = await page(`${session.url}/pay`, 'POST');
    expect(again.status).toBe(303);
    expect(fake.events.filter((e) => e.type === 'checkout.session.completed')).toHaveLength(1);
  });

  it('refunds from the page and from the dashboard', async () => {
    const customer = await stripe.customers.create({});
    const session = await stripe.checkout.sessions.create(packSession(customer.id, 'ws_1'));
    await page(`${session.url}/pay`, 'POST');
    const refunded = await page(`${session.url}/refund`, 'POST');
    expect(refunded).toMatchObject({ status: 303, location: `/checkout/${session.id}` });
    expect(fake.events.at(-1)).toMatchObject({ type: 'charge.refunded', data: { object: { amount_refunded: 1000, refunded: true } } });
    const shown = await page(session.url!);
    expect(shown.text).toContain('refunded $10.00');
    expect(shown.text).not.toContain('/refund"');

    const other = await stripe.checkout.sessions.create(packSession(customer.id, 'ws_1'));
    await fake.payCheckoutSession(other.id);
    const intent = (await stripe.checkout.sessions.retrieve(other.id)).payment_intent as string;
    const dashboard = await page(`${fake.url}/`);
    expect(dashboard.status).toBe(200);
    expect(dashboard.text).toContain(`action="/payment_intents/${intent}/refund"`);
    expect(await page(`${fake.url}/payment_intents/${intent}/refund`, 'POST')).toMatchObject({ status: 303, location: '/' });
    expect(fake.events.filter((e) => e.type === 'charge.refunded')).toHaveLength(2);
    expect((await page(`${fake.url}/checkout/cs_test_nope`)).status).toBe(404);
  });

  it('puts publicUrl in session URLs', async () => {
    const publicFake = await startFakeStripe({ publicUrl: 'https://stripe.example.test/' });
    try {
      const client = stripeClient(publicFake);
      const session = await client.checkout.sessions.create(packSession((await client.customers.create({})).id));
      expect(session.url).toBe(`https://stripe.example.test/checkout/${session.id}`);
    } finally {
      await publicFake.close();
    }
  });
});
