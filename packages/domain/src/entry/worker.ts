/**
 * What apps/worker takes from the domain: `@sdx/domain/worker`. A name the worker starts to use
 * is added here, from the module that declares it.
 */

export { type Services } from '../context';
export { type CounterReport, reconcileCounters } from '../credits/counters';
export { deliverToDestinations } from '../delivery/destination-delivery';
export { dispatchEvents } from '../delivery/webhook-dispatch';
export { reconcileJobs, type ReconcileReport } from '../jobs/reconcile';
export { type ProviderLookup, runJobAttempt } from '../jobs/run-job';
export { attemptDelivery } from '../webhooks/deliver';
export { recoverDeliveries } from '../webhooks/deliveries';
