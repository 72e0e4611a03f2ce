import http from 'node:http';
import { type AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { type FakeStripe } from '../src';

/** The `stripe` package pointed at the fake, as the service points it through STRIPE_API_BASE. */
export function stripeClient(fake: FakeStripe, secretKey = fake.secretKey): Stripe {
  const url = new URL(fake.url);
  return new Stripe(secretKey, { host: url.hostname, port: Number(url.port), protocol: 'http' });
}

/** The Checkout Session the service creates for a credit pack. */
export function packSession(customer: string, workspaceId = 'ws_test'): Stripe.Checkout.SessionCreateParams {
  return {
    mode: 'payment',
    client_reference_id: workspaceId,
    customer,
    metadata: { workspace_id: workspaceId, pack_id: 'pack_10k' },
    line_items: [{ price_data: { currency: 'usd', unit_amount: 1000, product_data: { name: '10,000 credits' } }, quantity: 1 }],
    payment_intent_data: { setup_future_usage: 'off_session', metadata: { workspace_id: workspaceId, pack_id: 'pack_10k' } },
    success_url: 'http://app.test/console/billing?checkout={CHECKOUT_SESSION_ID}',
    cancel_url: 'http://app.test/console/billing',
  };
}

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Statuses answered to the next requests, in turn; 200 once they are used up. */
  answers: number[];
  close(): Promise<void>;
}

/** A webhook endpoint that keeps each request's raw body, as a receiver must to check signatures. */
export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const answers: number[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(answers.shift() ?? 200, { 'Content-Type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/billing/stripe/webhook`,
    received,
    answers,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A form POST or GET to the fake's own pages, without following redirects. */
export async function page(
  url: string,
  method: 'GET' | 'POST' = 'GET',
): Promise<{ status: number; location: string | null; text: string }> {
  const res = await fetch(url, {
    method,
    redirect: 'manual',
    ...(method === 'POST' ? { headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: '' } : {}),
  });
  return { status: res.status, location: res.headers.get('location'), text: await res.text() };
}
