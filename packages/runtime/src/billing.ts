import { createStripeClient, type Services, type Stripe } from '@sdx/domain';
import type { TaskWake } from './background/wake';

/**
 * An API process's billing (extensions-2.md 1): its one Stripe client, built from the
 * configuration (null without STRIPE_SECRET_KEY: billing writes answer 503 then), and the wake
 * of the workers' `recharge` task (background/catalog.ts), which charges due auto-recharges.
 */
export interface ProcessBilling {
  readonly stripe: Stripe | null;
  /** Wakes the charger of the workers now. */
  kick(): void;
}

/** `wake`: how this process wakes the `recharge` task (`wakeOverRedis` in the API). */
export function processBilling(services: Pick<Services, 'config'>, wake: TaskWake): ProcessBilling {
  return { stripe: createStripeClient(services.config), kick: () => wake.kick() };
}
