import { getDailyUsage as daily } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** GET /v1/usage/daily — one row per UTC day, oldest first, empty days as zeros. */
export const getDailyUsage = route('getDailyUsage', {
  access: 'viewer',
  handler: async ({ deps: { services }, req, res }) => {
    const days = req.query.days === undefined ? 30 : Number(req.query.days);
    res.json(await daily(services.db, tenantOf(res).workspace.id, services.clock.now(), days));
  },
});
