import { renderWebhook, updateWebhook as update } from '@sdx/domain/api';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** PATCH /v1/webhooks/{webhook_id} — a new URL is checked like a new webhook's. */
export const updateWebhook = route('updateWebhook', {
  access: 'admin',
  handler: async ({ deps: { services }, req, res }, body) => {
    const row = await update(services, tenantOf(res), String(req.params.webhook_id), body, actor(req, res));
    res.json(renderWebhook(row));
  },
});
