import { listWebhooks as list, renderWebhook } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** GET /v1/webhooks — newest first, never a secret. */
export const listWebhooks = route('listWebhooks', {
  access: 'viewer',
  handler: async ({ deps: { services }, res }) => {
    res.json((await list(services.db, tenantOf(res))).map(renderWebhook));
  },
});
