import type Stripe from 'stripe';
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

async function paidIntent(): Promise<string> {
  const customer = await stripe.customers.create({ metadata: { workspace_id: 'ws_1' } });
  const session = await stripe.checkout.sessions.create(packSession(customer.id, 'ws_1'));
  const [completed] = await fake.payCheckoutSession(session.id);
  return (completed.data.object as unknown as Stripe.Checkout.Session).payment_intent as string;
}

/** The delivered events of these types, parsed by the `stripe` package from the signed bodies. */
function delivered(types: string[]): Stripe.Event[] {
  return receiver.received
    .map((r) => stripe.webhooks.constructEvent(r.body, r.headers['stripe-signature'] as string, fake.webhookSecret, 300))
    .filter((e) => types.includes(e.type));
}

describe('fake Stripe disputes', () => {
  it('a dispute of a paid charge emits charge.dispute.created and funds_withdrawn, signed, with a Dispute as Stripe renders it', async () => {
    const intentId = await paidIntent();
    const created = await fake.dispute(intentId);
    await fake.settled();
    const [event, withdrawn] = delivered(['charge.dispute.created', 'charge.dispute.funds_withdrawn']);
    expect(event.id).toBe(created.id);
    expect(withdrawn.type).toBe('charge.dispute.funds_withdrawn');
    expect(objectProblems('event', event)).toEqual([]);
    const dispute = event.data.object as Stripe.Dispute;
    expect(objectProblems('dispute', dispute)).toEqual([]);
    const charge = await stripe.charges.retrieve(dispute.charge as string);
    expect(dispute).toMatchObject({
      object: 'dispute',
      amount: 1000,
      currency: 'usd',
      payment_intent: intentId,
      status: 'needs_response',
      reason: 'fraudulent',
    });
    expect(charge).toMatchObject({ disputed: true, payment_intent: intentId });
    // A second dispute of the same charge is refused.
    await expect(fake.dispute(intentId)).rejects.toThrow(/disputed already/);
  });

  it('closes won (closed, then funds_reinstated) or lost (closed only), once', async () => {
    const won = (await fake.dispute(await paidIntent())).data.object as unknown as Stripe.Dispute;
    const lost = (await fake.dispute(await paidIntent())).data.object as unknown as Stripe.Dispute;
    await fake.closeDispute(won.id, 'won');
    await fake.closeDispute(lost.id, 'lost');
    await fake.settled();
    const closed = delivered(['charge.dispute.closed', 'charge.dispute.funds_reinstated']);
    expect(closed.map((e) => [e.type, (e.data.object as Stripe.Dispute).id, (e.data.object as Stripe.Dispute).status])).toEqual([
      ['charge.dispute.closed', won.id, 'won'],
      ['charge.dispute.funds_reinstated', won.id, 'won'],
      ['charge.dispute.closed', lost.id, 'lost'],
    ]);
    for (const e of closed) expect(objectProblems('dispute', e.data.object)).toEqual([]);
    await expect(fake.closeDispute(won.id, 'lost')).rejects.toThrow(/closed already/);
  });

  it('refuses to dispute an unknown PaymentIntent or charge', async () => {
    await expect(fake.dispute('pi_unknown')).rejects.toThrow(/No such payment_intent/);
    await expect(fake.dispute('ch_unknown')).rejects.toThrow(/No such charge/);
  });
});
