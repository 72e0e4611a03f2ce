import { runStripeWebhookDrill, stripeDrillChecks } from '../../../bench/drills/stripe-webhook';

/**
 * The fast subset of `npm run drill:stripe-webhook` that CI runs: one round of Stripe events
 * reaching the webhook while a private Postgres is stopped and started again. Stripe's retries
 * (the fake's) must find 5xx during the fault and a grant exactly once afterwards.
 */
it('Stripe events during a Postgres restart: 5xx while down, each pack granted exactly once after, ledger exact', async () => {
  const figures = await runStripeWebhookDrill({ rounds: 1, sessionsPerRound: 4, downMs: 1500, log: () => undefined });
  for (const check of stripeDrillChecks(figures))
    expect({ check: check.name, ok: check.ok, detail: check.detail }).toEqual({ check: check.name, ok: true, detail: check.detail });
  expect(figures.audit.problems).toEqual([]);
  expect(figures.sessions).toBe(8);
  expect(Object.keys(figures.duringFault).length).toBeGreaterThan(0);
}, 180_000);
