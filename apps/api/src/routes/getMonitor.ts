import { getMonitorOrThrow, renderMonitor } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** GET /v1/monitors/{monitor_id} */
export const getMonitor = route('getMonitor', {
  access: 'viewer',
  handler: async ({ deps: { services }, req, res }) => {
    res.json(renderMonitor(await getMonitorOrThrow(services.db, tenantOf(res), String(req.params.monitor_id))));
  },
});
