/**
 * What the tests, packages/testing, the benches and drills and the development scripts take from
 * the domain besides what the apps take: `@sdx/domain/testing`. Tests reach some internals on
 * purpose (a statement's plan, a group's settlement); they do it through this list.
 */

export { issueToken } from '../accounts/auth-tokens';
export { hashPassword, verifyPassword } from '../accounts/passwords';
export { SESSION_IDLE_MS } from '../accounts/sessions';
export { checkSecondFactor } from '../accounts/two-factor';
export {
  asRecoveryCode,
  asTotpCode,
  matchTotp,
  newRecoveryCode,
  newTotpSecret,
  otpauthUrl,
  recoveryCodeHash,
  timeStepAt,
  totpAt,
} from '../accounts/two-factor-codes';
export { createUser } from '../accounts/users';
export { recordAudit, systemActor } from '../audit/audit';
export { jobExportRows } from '../batches/exports';
export { listBatchViews } from '../batches/view';
export { PaymentFailed } from '../payment-gateway';
export { endGracePeriods } from '../billing/grace';
export { applyPlan } from '../billing/plans';
export { queueAutoRecharges } from '../billing/recharge';
export { planReservation } from '../credits/balances';
export { type CounterReport, reconcileCounters } from '../credits/counters';
export { grantCredits, lockBalance } from '../credits/grants';
export { releaseReservation, type SettleRequest, settleReservations, writeReservations } from '../credits/reservations';
export { getUsage, ledgerTotals } from '../credits/usage';
export { deliverToDestinations } from '../delivery/destination-delivery';
export { dispatchEvents } from '../delivery/webhook-dispatch';
export { createDestination } from '../destinations/destinations';
export { ApiError, ERROR_STATUS } from '../errors';
export { GroupCommit, GroupCommitOverloaded } from '../group-commit';
export { type Role, ROLES } from '../identity/roles';
export { randomToken } from '../identity/secrets';
export { newId } from '../ids';
export { recordAttemptSources } from '../jobs/attempt-sources';
export { completeJobs, type Completion } from '../jobs/complete';
export { type CreatedJob, createJob } from '../jobs/create-job';
export { readJobItems } from '../jobs/items';
export { moveResults } from '../jobs/move-results';
export { type JobFilters, listJobs } from '../jobs/queries';
export { chargeOf } from '../jobs/recipe';
export { RECONCILE_BATCH_SIZE, reconcileJobs, type ReconcileReport } from '../jobs/reconcile';
export { BucketResultObjects } from '../jobs/result-objects';
export { sweepOrphanedObjects } from '../jobs/result-pages';
export type { ResultAccess } from '../jobs/result-slices';
export { loadResult, resultItemsJson, resultJson, resultPages, resultsOf } from '../jobs/results';
export { claimJobs, claimStatement } from '../jobs/state';
export { DOMAIN_LAYERS } from '../layers';
export { queueMail, recentMailCount } from '../mail/outbox';
export { claimDueMail, MAIL_LEASE_MS, MAIL_MAX_ATTEMPTS, mailRetryDelay, sendDueMail } from '../mail/send';
export { PROFILE_METRICS } from '../monitors/definition';
export { ensureMonthPartition, MAX_SERIES_POINTS, readSeries, readSeriesJson, type SeriesQuery } from '../monitors/observations';
export { purgeMonitorPoints } from '../monitors/retention';
export { advanceMonitorRun, dispatchMonitors } from '../monitors/runs';
export { type Tenant } from '../resources';
export {
  purgeEndedSessions,
  purgeExpiredAuthTokens,
  purgeExpiredIdempotencyKeys,
  purgeExpiredOAuth,
  purgeExpiredResults,
  purgeOldMail,
  RETENTION_BATCH,
  runRetention,
} from '../retention/retention';
export { SCHEDULE_RUN_ENDPOINT, scheduleTenant } from '../schedules/dispatch-run';
export { listScheduleViews } from '../schedules/queries';
export { holdRuns } from '../schedules/runs';
export { sealerOf } from '../sealing';
export {
  DOWN_AFTER_AUTH_FAILURES,
  quotaDayOf,
  readSourceHealth,
  recordSourceHealth,
  SourceHealthGate,
  sourceHealthSamples,
} from '../sources/health';
export { type Clock, systemClock } from '../time';
export { createApiKey, revokeApiKey } from '../workspaces/api-keys';
export { pauseMonitorsOfCreator } from '../workspaces/creator-revoked';
export { deleteWorkspace, WORKSPACE_TABLES } from '../workspaces/delete-workspace';
export { addMember } from '../workspaces/members';
export { setDefaultWorkspace } from '../workspaces/teams';
export { countWorkspaces, createWorkspace, type CreateWorkspaceOptions, findWorkspace } from '../workspaces/workspaces';
