import { listDeliveries, renderDelivery } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** GET /v1/webhooks/{webhook_id}/deliveries — newest first; `starting_after` continues with older ones. */
export const listWebhookDeliveries = route('listWebhookDeliveries', {
  access: 'viewer',
  handler: async ({ deps: { services }, req, res }) => {
    const limit = Number(req.query.limit ?? 50);
    const startingAfter = typeof req.query.starting_after === 'string' ? req.query.starting_after : null;
    const rows = await listDeliveries(services.db, tenantOf(res), String(req.params.webhook_id), { limit, startingAfter });
    res.json(rows.map(renderDelivery));
  },
});
