import { acceptInvitation } from './acceptInvitation';
import { authorizeOAuthClient } from './authorizeOAuthClient';
import { cancelBatch } from './cancelBatch';
import { cancelJob } from './cancelJob';
import { cancelSubscription } from './cancelSubscription';
import { changePassword } from './changePassword';
import { confirmPasswordReset } from './confirmPasswordReset';
import { createBatch } from './createBatch';
import { createBillingPortal } from './createBillingPortal';
import { createCheckout } from './createCheckout';
import { createDestination } from './createDestination';
import { createInvitation } from './createInvitation';
import { createJob } from './createJob';
import { createKey } from './createKey';
import { createMonitor } from './createMonitor';
import { createOAuthConsent } from './createOAuthConsent';
import { createOAuthToken } from './createOAuthToken';
import { createQuote } from './createQuote';
import { createSchedule } from './createSchedule';
import { createSubscription } from './createSubscription';
import { createWebhook } from './createWebhook';
import { createWorkspace } from './createWorkspace';
import { deleteDestination } from './deleteDestination';
import { deleteMonitor } from './deleteMonitor';
import { deleteSchedule } from './deleteSchedule';
import { deleteWebhook } from './deleteWebhook';
import { disableTwoFactor } from './disableTwoFactor';
import { enableTwoFactor } from './enableTwoFactor';
import { endMcpSession } from './endMcpSession';
import { exportBatch } from './exportBatch';
import { exportJob } from './exportJob';
import { exportMonitorSeries } from './exportMonitorSeries';
import { extract } from './extract';
import { getAccount } from './getAccount';
import { getAuthorizationServerMetadata } from './getAuthorizationServerMetadata';
import { getBatch } from './getBatch';
import { getBilling } from './getBilling';
import { getCurrentUsage } from './getCurrentUsage';
import { getDailyUsage } from './getDailyUsage';
import { getDestination } from './getDestination';
import { getDocs } from './getDocs';
import { getDocsScript } from './getDocsScript';
import { getJob } from './getJob';
import { getMcpProtectedResourceMetadata } from './getMcpProtectedResourceMetadata';
import { getMetrics } from './getMetrics';
import { getMonitor } from './getMonitor';
import { getMonitorSeries } from './getMonitorSeries';
import { getOpenApiJson } from './getOpenApiJson';
import { getOpenApiYaml } from './getOpenApiYaml';
import { getProtectedResourceMetadata } from './getProtectedResourceMetadata';
import { getSchedule } from './getSchedule';
import { getSession } from './getSession';
import { getWebhook } from './getWebhook';
import { healthz } from './healthz';
import { listAuditEvents } from './listAuditEvents';
import { listBatches } from './listBatches';
import { listDestinations } from './listDestinations';
import { listDevMail } from './listDevMail';
import { listInvitations } from './listInvitations';
import { listInvoices } from './listInvoices';
import { listJobItems } from './listJobItems';
import { listJobs } from './listJobs';
import { listKeys } from './listKeys';
import { listMembers } from './listMembers';
import { listMonitorChanges } from './listMonitorChanges';
import { listMonitorRuns } from './listMonitorRuns';
import { listMonitors } from './listMonitors';
import { listPayments } from './listPayments';
import { listPlatforms } from './listPlatforms';
import { listSchedules } from './listSchedules';
import { listWebhookDeliveries } from './listWebhookDeliveries';
import { listWebhooks } from './listWebhooks';
import { listWorkspaces } from './listWorkspaces';
import { logIn } from './logIn';
import { logOut } from './logOut';
import { openMcpStream } from './openMcpStream';
import { pauseMonitor } from './pauseMonitor';
import { pauseSchedule } from './pauseSchedule';
import { postMcpMessage } from './postMcpMessage';
import { previewInvitation } from './previewInvitation';
import { previewSchedule } from './previewSchedule';
import { readyz } from './readyz';
import { receiveStripeWebhook } from './receiveStripeWebhook';
import { redeliverWebhookDelivery } from './redeliverWebhookDelivery';
import { registerOAuthClient } from './registerOAuthClient';
import { removeMember } from './removeMember';
import { requestPasswordReset } from './requestPasswordReset';
import { resendVerification } from './resendVerification';
import { resumeMonitor } from './resumeMonitor';
import { resumeSchedule } from './resumeSchedule';
import { revokeInvitation } from './revokeInvitation';
import { revokeKey } from './revokeKey';
import { revokeOAuthToken } from './revokeOAuthToken';
import { rotateWebhookSecret } from './rotateWebhookSecret';
import { runMonitor } from './runMonitor';
import { runSchedule } from './runSchedule';
import { setUpTwoFactor } from './setUpTwoFactor';
import { signUp } from './signUp';
import { streamBatchEvents } from './streamBatchEvents';
import { streamJobEvents } from './streamJobEvents';
import { testWebhook } from './testWebhook';
import { updateAutoRecharge } from './updateAutoRecharge';
import { updateBillingLimits } from './updateBillingLimits';
import { updateKey } from './updateKey';
import { updateMember } from './updateMember';
import { updateMonitor } from './updateMonitor';
import { updateSchedule } from './updateSchedule';
import { updateWebhook } from './updateWebhook';
import { updateWorkspace } from './updateWorkspace';
import { verifyEmail } from './verifyEmail';
import type { Route } from './route';

/**
 * Every route of the API, one per operation of openapi.yaml, each declared in
 * `routes/<operationId>.ts` with `route()` (routes/route.ts): its access, how its request is read
 * and its handler. app.ts mounts them in this order (the OAuth protocol routes by oauth/index.ts,
 * /mcp by mcp/index.ts); a prefix before a longer path that starts with it.
 */
export const ROUTES: readonly Route[] = [
  healthz,
  readyz,
  getMetrics,
  getOpenApiYaml,
  getOpenApiJson,
  getDocs,
  getDocsScript,
  listPlatforms,
  getAccount,
  getCurrentUsage,
  extract,
  createJob,
  listJobs,
  getJob,
  cancelJob,
  setUpTwoFactor,
  enableTwoFactor,
  disableTwoFactor,
  exportJob,
  listJobItems,
  createBatch,
  listBatches,
  getBatch,
  cancelBatch,
  exportBatch,
  createQuote,
  getDailyUsage,
  previewSchedule,
  createSchedule,
  listSchedules,
  getSchedule,
  updateSchedule,
  deleteSchedule,
  pauseSchedule,
  resumeSchedule,
  runSchedule,
  createMonitor,
  listMonitors,
  getMonitor,
  updateMonitor,
  deleteMonitor,
  pauseMonitor,
  resumeMonitor,
  runMonitor,
  listMonitorRuns,
  getMonitorSeries,
  exportMonitorSeries,
  listMonitorChanges,
  createOAuthConsent,
  signUp,
  logIn,
  getSession,
  logOut,
  changePassword,
  verifyEmail,
  resendVerification,
  requestPasswordReset,
  confirmPasswordReset,
  listDevMail,
  listWorkspaces,
  createWorkspace,
  updateWorkspace,
  listMembers,
  updateMember,
  removeMember,
  createInvitation,
  listInvitations,
  revokeInvitation,
  acceptInvitation,
  previewInvitation,
  createKey,
  listKeys,
  revokeKey,
  updateKey,
  listAuditEvents,
  createWebhook,
  listWebhooks,
  getWebhook,
  updateWebhook,
  deleteWebhook,
  rotateWebhookSecret,
  testWebhook,
  listWebhookDeliveries,
  redeliverWebhookDelivery,
  streamJobEvents,
  streamBatchEvents,
  createDestination,
  listDestinations,
  getDestination,
  deleteDestination,
  getBilling,
  createCheckout,
  createSubscription,
  cancelSubscription,
  createBillingPortal,
  listInvoices,
  receiveStripeWebhook,
  listPayments,
  updateAutoRecharge,
  updateBillingLimits,
  getMcpProtectedResourceMetadata,
  getProtectedResourceMetadata,
  getAuthorizationServerMetadata,
  registerOAuthClient,
  authorizeOAuthClient,
  createOAuthToken,
  revokeOAuthToken,
  postMcpMessage,
  openMcpStream,
  endMcpSession,
];
