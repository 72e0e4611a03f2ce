import { DEFAULT_SECRET_KEY, DEFAULT_WEBHOOK_SECRET, startFakeStripe } from '@sdx/fake-stripe';

/**
 * `npm run stripe:fake`: a fake Stripe for local development (packages/fake-stripe), until
 * SIGINT or SIGTERM. It prints the variables that point the service at it; checkout links open
 * its hosted page, whose Pay button completes the payment and sends the webhooks.
 *
 *   STRIPE_FAKE_PORT          port (default 12111)
 *   STRIPE_FAKE_HOST          interface (default 127.0.0.1)
 *   STRIPE_FAKE_WEBHOOK_URL   where events go (default {APP_URL}/v1/billing/stripe/webhook, APP_URL
 *                             defaulting to http://127.0.0.1:{PORT or 3000} as `npm start` serves)
 *   STRIPE_FAKE_PUBLIC_URL    base of the hosted Checkout links (default the fake's own URL)
 *   STRIPE_FAKE_SECRET_KEY, STRIPE_FAKE_WEBHOOK_SECRET   the keys (defaults are fixed test values)
 *   STRIPE_FAKE_RETRY_DELAYS_MS  waits between delivery attempts, comma-separated
 *                             (default 1000,5000,30000,120000)
 */
function retryDelays(value: string | undefined): number[] {
  if (!value) return [1000, 5000, 30_000, 120_000];
  const delays = value.split(',').map((s) => Number(s.trim()));
  if (delays.some((d) => !Number.isFinite(d) || d < 0))
    throw new Error(`STRIPE_FAKE_RETRY_DELAYS_MS: expected comma-separated milliseconds, got ${value}`);
  return delays;
}

async function main(): Promise<void> {
  const env = process.env;
  const appUrl = (env.APP_URL || `http://127.0.0.1:${env.PORT || 3000}`).replace(/\/+$/, '');
  const webhookUrl = env.STRIPE_FAKE_WEBHOOK_URL || `${appUrl}/v1/billing/stripe/webhook`;
  const fake = await startFakeStripe({
    port: Number(env.STRIPE_FAKE_PORT || 12111),
    host: env.STRIPE_FAKE_HOST || '127.0.0.1',
    secretKey: env.STRIPE_FAKE_SECRET_KEY || DEFAULT_SECRET_KEY,
    webhookSecret: env.STRIPE_FAKE_WEBHOOK_SECRET || DEFAULT_WEBHOOK_SECRET,
    webhookUrl,
    retryDelaysMs: retryDelays(env.STRIPE_FAKE_RETRY_DELAYS_MS),
    ...(env.STRIPE_FAKE_PUBLIC_URL ? { publicUrl: env.STRIPE_FAKE_PUBLIC_URL } : {}),
    log: (message) => console.log(`[stripe-fake] ${message}`),
  });
  console.log(
    [
      `Fake Stripe on ${fake.url} (dashboard: ${fake.url}/), webhooks to ${webhookUrl}`,
      'Run the service with:',
      `  STRIPE_API_BASE=${fake.url}`,
      `  STRIPE_SECRET_KEY=${fake.secretKey}`,
      `  STRIPE_WEBHOOK_SECRET=${fake.webhookSecret}`,
      '',
    ].join('\n'),
  );
  const stop = (signal: NodeJS.Signals) => {
    console.log(`[stripe-fake] ${signal}: stopping`);
    void fake.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
