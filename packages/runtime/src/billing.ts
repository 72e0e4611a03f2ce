import { RechargeCharger, type Services } from '@sdx/domain/runtime';

/**
 * A process's auto-recharge charger (packages/domain/src/billing/recharge.ts), which creates the
 * off-session charges of due recharges through the process's payment gateway
 * (`Services.payments`, built by `createRuntime`; without it, billing writes answer 503 and
 * nothing is charged). Every API process and every worker runs one; the routes kick it after a
 * commit that may have queued a recharge. Whoever starts it closes it.
 */
export interface ProcessBilling {
  readonly charger: RechargeCharger | null;
  /** Looks for due recharges now. */
  kick(): void;
  close(): Promise<void>;
}

export function startBilling(
  services: Pick<Services, 'db' | 'config' | 'clock' | 'log' | 'outbox' | 'payments'>,
  options: { intervalMs?: number; charge?: boolean } = {},
): ProcessBilling {
  const payments = services.payments;
  const charger =
    payments && options.charge !== false
      ? new RechargeCharger({ db: services.db, config: services.config, clock: services.clock, log: services.log, outbox: services.outbox, payments, intervalMs: options.intervalMs })
      : null;
  return {
    charger,
    kick: () => charger?.kick(),
    close: async () => {
      await charger?.close();
    },
  };
}
