import { deleteWebhook as remove } from '@sdx/domain/api';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** DELETE /v1/webhooks/{webhook_id} — 204; nothing more is sent to it. */
export const deleteWebhook = route('deleteWebhook', {
  access: 'admin',
  handler: async ({ deps: { services }, req, res }) => {
    await remove(services, tenantOf(res), String(req.params.webhook_id), actor(req, res));
    res.status(204).end();
  },
});
