import type { RouteDef } from '../app';
import { cancelBatch } from './cancelBatch';
import { createBatch } from './createBatch';
import { exportBatch } from './exportBatch';
import { exportJob } from './exportJob';
import { listJobItems } from './listJobItems';
import { getBatch } from './getBatch';
import { listBatches } from './listBatches';
import { createSchedule } from './createSchedule';
import { deleteSchedule } from './deleteSchedule';
import { getSchedule } from './getSchedule';
import { listSchedules } from './listSchedules';
import { pauseSchedule } from './pauseSchedule';
import { resumeSchedule } from './resumeSchedule';
import { runSchedule } from './runSchedule';
import { updateSchedule } from './updateSchedule';
import { createQuote } from './createQuote';
import { getDailyUsage } from './getDailyUsage';
import { previewSchedule } from './previewSchedule';
import { disableTwoFactor } from './disableTwoFactor';
import { enableTwoFactor } from './enableTwoFactor';
import { setUpTwoFactor } from './setUpTwoFactor';
import { createOAuthConsent } from './createOAuthConsent';
import { createMonitor } from './createMonitor';
import { listMonitors } from './listMonitors';
import { getMonitor } from './getMonitor';
import { updateMonitor } from './updateMonitor';
import { deleteMonitor } from './deleteMonitor';
import { pauseMonitor } from './pauseMonitor';
import { resumeMonitor } from './resumeMonitor';
import { runMonitor } from './runMonitor';
import { listMonitorRuns } from './listMonitorRuns';
import { getMonitorSeries } from './getMonitorSeries';
import { exportMonitorSeries } from './exportMonitorSeries';
import { listMonitorChanges } from './listMonitorChanges';

/** Routes of two-factor sign-in, batches, schedules, monitors, exports, result items, quotes, usage history and OAuth consent; registered after the core routes in app.ts. */
export const routeTable: RouteDef[] = [
  { method: 'post', path: '/v1/auth/2fa/setup', handler: setUpTwoFactor },
  { method: 'post', path: '/v1/auth/2fa/enable', handler: enableTwoFactor },
  { method: 'post', path: '/v1/auth/2fa/disable', handler: disableTwoFactor },
  { method: 'get', path: '/v1/jobs/:job_id/export', handler: exportJob },
  { method: 'get', path: '/v1/jobs/:job_id/items', handler: listJobItems },
  { method: 'post', path: '/v1/batches', handler: createBatch },
  { method: 'get', path: '/v1/batches', handler: listBatches },
  { method: 'get', path: '/v1/batches/:batch_id', handler: getBatch },
  { method: 'post', path: '/v1/batches/:batch_id/cancel', handler: cancelBatch },
  { method: 'get', path: '/v1/batches/:batch_id/export', handler: exportBatch },
  { method: 'post', path: '/v1/quotes', handler: createQuote },
  { method: 'get', path: '/v1/usage/daily', handler: getDailyUsage },
  { method: 'post', path: '/v1/schedules/preview', handler: previewSchedule },
  { method: 'post', path: '/v1/schedules', handler: createSchedule },
  { method: 'get', path: '/v1/schedules', handler: listSchedules },
  { method: 'get', path: '/v1/schedules/:schedule_id', handler: getSchedule },
  { method: 'put', path: '/v1/schedules/:schedule_id', handler: updateSchedule },
  { method: 'delete', path: '/v1/schedules/:schedule_id', handler: deleteSchedule },
  { method: 'post', path: '/v1/schedules/:schedule_id/pause', handler: pauseSchedule },
  { method: 'post', path: '/v1/schedules/:schedule_id/resume', handler: resumeSchedule },
  { method: 'post', path: '/v1/schedules/:schedule_id/run', handler: runSchedule },
  { method: 'post', path: '/v1/monitors', handler: createMonitor },
  { method: 'get', path: '/v1/monitors', handler: listMonitors },
  { method: 'get', path: '/v1/monitors/:monitor_id', handler: getMonitor },
  { method: 'patch', path: '/v1/monitors/:monitor_id', handler: updateMonitor },
  { method: 'delete', path: '/v1/monitors/:monitor_id', handler: deleteMonitor },
  { method: 'post', path: '/v1/monitors/:monitor_id/pause', handler: pauseMonitor },
  { method: 'post', path: '/v1/monitors/:monitor_id/resume', handler: resumeMonitor },
  { method: 'post', path: '/v1/monitors/:monitor_id/run', handler: runMonitor },
  { method: 'get', path: '/v1/monitors/:monitor_id/runs', handler: listMonitorRuns },
  { method: 'get', path: '/v1/monitors/:monitor_id/series', handler: getMonitorSeries },
  { method: 'get', path: '/v1/monitors/:monitor_id/series/export', handler: exportMonitorSeries },
  { method: 'get', path: '/v1/monitors/:monitor_id/changes', handler: listMonitorChanges },
  { method: 'post', path: '/v1/oauth/consent', handler: createOAuthConsent },
];
