import type { Admissions } from './admission/admit';
import type { JobCompletions } from './jobs/complete';
import type { JobClaims } from './jobs/state';
import type { Resources } from './resources';
import type { DeliveryAttempts } from './webhooks/deliver';
import type { KeyLookups } from './workspaces/key-lookup';

export type { LiveChange, LivePublisher, OperationGate, OutboxSignal, Resources, Tenant } from './resources';

/**
 * What domain functions need, built once per process (packages/runtime): the resources, and the
 * per-process services that group concurrent callers' writes into one transaction. Each service
 * is a small interface declared beside its one implementation, in the module whose SQL it runs:
 *
 * - `admissions`: `Admissions`, admission/admit.ts (`GroupAdmissions` → `admitGroup`);
 * - `claims`: `JobClaims`, jobs/state.ts (`GroupJobClaims`, a group commit of `claimJobs`);
 * - `completions`: `JobCompletions`, jobs/complete.ts (`GroupJobCompletions`, a group commit of `completeJobs`);
 * - `keys`: `KeyLookups`, workspaces/key-lookup.ts (`GroupKeyLookups` → `lookupKeys`);
 * - `deliveries`: `DeliveryAttempts`, webhooks/deliver.ts (`GroupDeliveryAttempts` →
 *   `claimDeliveries`, `recordDeliveryOutcomes`).
 *
 * Those modules depend on `Resources` only (resources.ts), never on this file: the domain has
 * no import cycle.
 */
export interface Services extends Resources {
  admissions: Admissions;
  claims: JobClaims;
  completions: JobCompletions;
  keys: KeyLookups;
  deliveries: DeliveryAttempts;
}
