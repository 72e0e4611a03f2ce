import { createStripeClient, RechargeCharger, type Services, type Stripe } from '@sdx/domain/runtime';

/**
 * A process's billing (extensions-2.md 1): its one Stripe client, built from the configuration
 * (null without STRIPE_SECRET_KEY: billing writes answer 503 then), and the auto-recharge
 * charger (packages/domain/src/billing/recharge.ts) that creates the off-session PaymentIntents
 * of due recharges. Every API process and every worker runs one; the routes kick it after a
 * commit that may have queued a recharge. Whoever starts it closes it.
 */
export interface ProcessBilling {
  readonly stripe: Stripe | null;
  readonly charger: RechargeCharger | null;
  /** Looks for due recharges now. */
  kick(): void;
  close(): Promise<void>;
}

export function startBilling(
  services: Pick<Services, 'db' | 'config' | 'clock' | 'log' | 'outbox'>,
  options: { intervalMs?: number; charge?: boolean } = {},
): ProcessBilling {
  const stripe = createStripeClient(services.config);
  const charger =
    stripe && options.charge !== false
      ? new RechargeCharger({ db: services.db, config: services.config, clock: services.clock, log: services.log, outbox: services.outbox, stripe, intervalMs: options.intervalMs })
      : null;
  return {
    stripe,
    charger,
    kick: () => charger?.kick(),
    close: async () => {
      await charger?.close();
    },
  };
}
