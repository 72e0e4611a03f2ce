import { getWebhookOrThrow, renderWebhook } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** GET /v1/webhooks/{webhook_id} — unknown or another workspace's: 404 webhook_not_found. */
export const getWebhook = route('getWebhook', {
  access: 'viewer',
  handler: async ({ deps: { services }, req, res }) => {
    res.json(renderWebhook(await getWebhookOrThrow(services.db, tenantOf(res), String(req.params.webhook_id))));
  },
});
