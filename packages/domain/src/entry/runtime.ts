/**
 * What packages/runtime takes from the domain to build a process's services:
 * `@sdx/domain/runtime`. A name it starts to use is added here, from the module that declares it.
 */

export { GroupAdmissions } from '../admission/admit';
export { type Services } from '../context';
export { GroupJobCompletions } from '../jobs/complete';
export { BucketResultObjects } from '../jobs/result-objects';
export { GroupJobClaims } from '../jobs/state';
export { type Resources } from '../resources';
export { sealerOf } from '../sealing';
export { SourceHealthGate, sourceHealthSamples } from '../sources/health';
export { type Clock, systemClock } from '../time';
export { GroupDeliveryAttempts } from '../webhooks/deliver';
export { LocalSignal } from '../webhooks/outbox-signal';
export { GroupKeyLookups } from '../workspaces/key-lookup';
// The background catalog's tasks (packages/runtime/src/background/catalog.ts) and the queue consumers.
export { chargeDueRecharges } from '../billing/recharge';
export { endGracePeriods } from '../billing/grace';
export { type CounterReport, reconcileCounters } from '../credits/counters';
export { deliverToDestinations } from '../delivery/destination-delivery';
export { sendMailBatch } from '../delivery/mail-sender';
export { dispatchEvents } from '../delivery/webhook-dispatch';
export { type ReconcileReport, reconcileJobs } from '../jobs/reconcile';
export { sweepOrphanedObjects, type SweepState } from '../jobs/result-pages';
export { type ProviderLookup, runJobAttempt } from '../jobs/run-job';
export { type MailTransport } from '../mail/send';
export { dispatchMonitors } from '../monitors/runs';
export { runRetention } from '../retention/retention';
export { attemptDelivery } from '../webhooks/deliver';
export { recoverDeliveries } from '../webhooks/deliveries';
