import { renderMonitor, resumeMonitor as resume } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** POST /v1/monitors/{monitor_id}/resume */
export const resumeMonitor = route('resumeMonitor', {
  access: 'member',
  handler: async ({ deps: { services }, req, res }) => {
    res.json(renderMonitor(await resume(services, tenantOf(res), String(req.params.monitor_id))));
  },
});
