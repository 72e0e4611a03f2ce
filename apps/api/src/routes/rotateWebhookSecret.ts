import { renderWebhook, rotateWebhookSecret as rotate } from '@sdx/domain/api';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** POST /v1/webhooks/{webhook_id}/rotate-secret — the new secret, shown once; the old one signs beside it for 24 hours. */
export const rotateWebhookSecret = route('rotateWebhookSecret', {
  access: 'admin',
  handler: async ({ deps: { services }, req, res }) => {
    const { webhook, secret } = await rotate(services, tenantOf(res), String(req.params.webhook_id), actor(req, res));
    res.json({ ...renderWebhook(webhook), secret });
  },
});
