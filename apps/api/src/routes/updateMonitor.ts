import { renderMonitor, updateMonitor as update } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** PATCH /v1/monitors/{monitor_id} — the fields given replace the stored ones. */
export const updateMonitor = route('updateMonitor', {
  access: 'member',
  handler: async ({ deps: { services }, req, res }, body) => {
    const monitor = await update(services, tenantOf(res), String(req.params.monitor_id), body);
    res.json(renderMonitor(monitor));
  },
});
