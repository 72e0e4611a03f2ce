import { renderMonitorRun, runMonitorNow } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** POST /v1/monitors/{monitor_id}/run — 202 with the run (skipped_credits when it is not affordable as a whole). */
export const runMonitor = route('runMonitor', {
  access: 'member',
  handler: async ({ deps: { services }, req, res }) => {
    const run = await runMonitorNow(services, tenantOf(res), String(req.params.monitor_id));
    res.status(202).json(renderMonitorRun(run));
  },
});
