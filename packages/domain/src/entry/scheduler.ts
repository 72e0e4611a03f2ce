/**
 * What apps/scheduler and packages/scheduler-engine take from the domain: `@sdx/domain/scheduler`.
 * A name they start to use is added here, from the module that declares it.
 */

export { endGracePeriods } from '../billing/grace';
export { type Services } from '../context';
export { IDEMPOTENCY_TTL_MS } from '../idempotency/idempotency';
export { sweepOrphanedObjects, type SweepState } from '../jobs/result-pages';
export { dispatchMonitors } from '../monitors/runs';
export { type Resources, type ResultObjects, type Tenant } from '../resources';
export { type RetentionPolicy, runRetention } from '../retention/retention';
export { runTenant } from '../schedules/creator';
export { CATCH_UP_WINDOW_MS, recurrenceOf } from '../schedules/definition';
export { attemptScheduleRun, schedulesWithActiveWork } from '../schedules/dispatch-run';
export { failExpiredRuns, holdRuns, insertScheduledRuns, type RunHold, type ScheduleRunOutcome } from '../schedules/runs';
export { type Clock } from '../time';
