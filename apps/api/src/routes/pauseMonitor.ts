import { pauseMonitor as pause, renderMonitor } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** POST /v1/monitors/{monitor_id}/pause */
export const pauseMonitor = route('pauseMonitor', {
  access: 'member',
  handler: async ({ deps: { services }, req, res }) => {
    res.json(renderMonitor(await pause(services, tenantOf(res), String(req.params.monitor_id))));
  },
});
