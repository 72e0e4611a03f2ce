import { listMonitorRuns as list, renderMonitorRun } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { pageRequestOf } from './paging';
import { route } from './route';

/** GET /v1/monitors/{monitor_id}/runs — `{data, has_more}`, newest first. */
export const listMonitorRuns = route('listMonitorRuns', {
  access: 'viewer',
  handler: async ({ deps: { services }, req, res }) => {
    const page = await list(services.db, tenantOf(res), String(req.params.monitor_id), pageRequestOf(req, 50));
    res.json({ data: page.rows.map(renderMonitorRun), has_more: page.hasMore });
  },
});
