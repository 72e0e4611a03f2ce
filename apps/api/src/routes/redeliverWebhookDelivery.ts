import { redeliver, renderDelivery } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { WebhookSendLimiter } from '../middleware/webhook-limits';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** POST /v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver — 202 with the new delivery (same event, same webhook-id); at most 60 a minute per webhook. */
export const redeliverWebhookDelivery = route('redeliverWebhookDelivery', {
  access: 'admin',
  setup: ({ services, redis }: AppDeps) => {
    const limiter = new WebhookSendLimiter(redis, services.config.redisPrefix);
    return async ({ req, res }) => {
      const tenant = tenantOf(res);
      const webhookId = String(req.params.webhook_id);
      await limiter.redelivery(tenant.workspace.id, webhookId);
      res.status(202).json(renderDelivery(await redeliver(services, tenant, webhookId, String(req.params.delivery_id))));
    };
  },
});
