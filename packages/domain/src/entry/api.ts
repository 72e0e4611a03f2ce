/**
 * What apps/api (its routes, middleware, MCP server, OAuth provider and admin CLI) takes from the
 * domain: `@sdx/domain/api`. A name the API starts to use is added here, from the module that
 * declares it; nothing else of the domain is reachable from the API.
 */

export { requestPasswordReset, resendVerification } from '../accounts/mail-requests';
export { changePassword } from '../accounts/password-change';
export { confirmPasswordReset, issuePasswordResetLink } from '../accounts/password-reset';
export {
  type ClientMeta,
  endSession,
  resolveSession,
  SESSION_COOKIE,
  SESSION_MAX_MS,
  sessionExpiresAt,
  touchSession,
} from '../accounts/sessions';
export { type SignedIn } from '../accounts/signed-in';
export { disableTwoFactor, enableTwoFactor, setUpTwoFactor } from '../accounts/two-factor';
export { type UserView } from '../accounts/user-view';
export { checkCredentials, signIn, signUp } from '../accounts/users';
export { verificationEmail, verifyEmail, verifyEmailByOperator } from '../accounts/verification';
export { quote } from '../admission/quote';
export { type Actor, actorOf, listAuditEvents, recordAudit, renderAuditEvent, systemActor } from '../audit/audit';
export { cancelBatch } from '../batches/cancel-batch';
export { createBatch } from '../batches/create-batch';
export {
  BATCH_CONTEXT_COLUMNS,
  batchExportItems,
  batchExportJson,
  batchExportLines,
  batchExportRows,
  jobExportRows,
  prepareBatchExport,
  prepareJobExport,
} from '../batches/exports';
export { aggregateChildren, countChildrenOf, getBatchOrThrow } from '../batches/queries';
export { renderBatch } from '../batches/render';
export { getBatchView, listBatchViews } from '../batches/view';
export { type CheckoutRequest, createCheckout } from '../billing/checkout';
export { listPayments, renderPayment } from '../billing/payments';
export { type AutoRechargeRequest, type BillingLimits, getBilling, updateAutoRecharge, updateBillingLimits } from '../billing/settings';
export { receiveStripeEvent } from '../billing/stripe-events';
export {
  type BillingPortalRequest,
  cancelSubscription,
  createBillingPortal,
  createSubscription,
  listInvoices,
  renderInvoice,
  type SubscriptionRequest,
} from '../billing/subscriptions';
export { type Services } from '../context';
export { reconcileCounters } from '../credits/counters';
export { grantCredits } from '../credits/grants';
export { getCredits, getDailyUsage, getUsage } from '../credits/usage';
export {
  createDestination,
  deleteDestination,
  type DestinationInput,
  getDestinationOrThrow,
  listDestinations,
  renderDestination,
} from '../destinations/destinations';
export { ApiError, RequestValidationError, type ValidationIssue } from '../errors';
export { GroupCommitOverloaded } from '../group-commit';
export { normalizeEmail } from '../identity/emails';
export { type Role, roleAtLeast } from '../identity/roles';
export { attemptSourcesOf } from '../jobs/attempt-sources';
export { cancelJob } from '../jobs/cancel-job';
export { createJob, type CreateJobInput, type CreateJobOptions } from '../jobs/create-job';
export { ITEMS_PAGE_DEFAULT, readJobItems } from '../jobs/items';
export { type MoveProgress, moveResults } from '../jobs/move-results';
export { getJobOrThrow, type JobFilters, listJobs, loadJobById } from '../jobs/queries';
export { type JobFlags, renderJob } from '../jobs/render';
export { type PageCount } from '../jobs/result-object-pages';
export { BucketResultObjects } from '../jobs/result-objects';
export { pageCountsOf, type ResultAccess, resultSourceId } from '../jobs/result-slices';
export { resultItemLines, resultJson } from '../jobs/results';
export { extractionFailed, isTerminal, waitForJob } from '../jobs/wait-for-job';
export { type ChangeKind, listMonitorChanges } from '../monitors/changes';
export { MAX_MONITOR_ALERTS, MAX_MONITOR_TARGETS, type MonitorInput, type MonitorPatch } from '../monitors/definition';
export { createMonitor, deleteMonitor, pauseMonitor, resumeMonitor, updateMonitor } from '../monitors/monitors';
export { readSeries, readSeriesJson } from '../monitors/observations';
export { getMonitorOrThrow, listMonitorRuns, listMonitors, renderMonitor, renderMonitorRun } from '../monitors/queries';
export { runMonitorNow } from '../monitors/runs';
export { createOAuthClient, findOAuthClient, MAX_REDIRECT_URIS, redirectUriProblem, renderClient } from '../oauth/clients';
export { consentToClient, DEFAULT_OAUTH_SCOPE } from '../oauth/consent';
export { codeChallengeOf, exchangeCode, type OAuthGrantResult, refreshTokens, revokeClientToken } from '../oauth/tokens';
export { type PageRequest } from '../paging';
export { type Tenant } from '../resources';
export { createSchedule } from '../schedules/create-schedule';
export { type ScheduleInput } from '../schedules/definition';
export { deleteSchedule } from '../schedules/delete-schedule';
export { pauseSchedule } from '../schedules/pause-schedule';
export { previewSchedule } from '../schedules/preview';
export { getScheduleView, listScheduleViews } from '../schedules/queries';
export { renderScheduleView } from '../schedules/render';
export { resumeSchedule } from '../schedules/resume-schedule';
export { runScheduleNow } from '../schedules/run-schedule';
export { updateSchedule } from '../schedules/update-schedule';
export { resealSecrets } from '../secrets/reseal';
export { readSourceHealth, type SourceHealth } from '../sources/health';
export { systemClock } from '../time';
export { listDeliveries, redeliver, renderDelivery, sendTestEvent } from '../webhooks/deliveries';
export {
  createWebhook,
  deleteWebhook,
  getWebhookOrThrow,
  listWebhooks,
  renderWebhook,
  rotateWebhookSecret,
  updateWebhook,
  type WebhookChanges,
  type WebhookInput,
} from '../webhooks/endpoints';
export { listApiKeys, updateApiKey } from '../workspaces/api-key-settings';
export { createApiKey, renderApiKey, revokeApiKey } from '../workspaces/api-keys';
export { deleteWorkspace } from '../workspaces/delete-workspace';
export { exportWorkspaceLines } from '../workspaces/export-workspace';
export {
  acceptInvitation,
  createInvitation,
  listInvitations,
  previewInvitation,
  renderInvitation,
  revokeInvitation,
} from '../workspaces/invitations';
export { apiKeyActive, touchApiKey } from '../workspaces/key-use';
export { type Caller, changeMemberRole, listMembers, removeMember } from '../workspaces/members';
export {
  createTeamWorkspace,
  defaultWorkspaceOf,
  listAllWorkspaces,
  listUserWorkspaces,
  renderWorkspace,
  updateWorkspace,
} from '../workspaces/teams';
export { createWorkspace, findWorkspace } from '../workspaces/workspaces';
export { StoreUnavailable } from '@sdx/storage';
