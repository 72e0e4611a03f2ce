import { createMonitor as create, renderMonitor } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** POST /v1/monitors — 201 with the active monitor, its next_run_at and estimates. */
export const createMonitor = route('createMonitor', {
  access: 'member',
  handler: async ({ deps: { services }, res }, body) => {
    const monitor = await create(services, tenantOf(res), body);
    res.status(201).json(renderMonitor(monitor));
  },
});
