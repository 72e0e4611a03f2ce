import { getUsage } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** GET /v1/usage/current */
export const getCurrentUsage = route('getCurrentUsage', {
  access: 'viewer',
  handler: async ({ deps: { services }, res }) => {
    res.json(await getUsage(services.db, tenantOf(res).workspace, services.clock.now()));
  },
});
