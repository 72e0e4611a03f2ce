import type { TaskWake } from './background/wake';

/**
 * An API process's billing (extensions-2.md 1): the wake of the workers' `recharge` task
 * (background/catalog.ts), which charges due auto-recharges through the payment gateway
 * (`Services.payments`, built by `createRuntime`; without it, billing writes answer 503).
 */
export interface ProcessBilling {
  /** Wakes the charger of the workers now. */
  kick(): void;
}

/** `wake`: how this process wakes the `recharge` task (`wakeOverRedis` in the API). */
export function processBilling(wake: TaskWake): ProcessBilling {
  return { kick: () => wake.kick() };
}
