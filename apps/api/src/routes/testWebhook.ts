import { renderDelivery, sendTestEvent } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { WebhookSendLimiter } from '../middleware/webhook-limits';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** POST /v1/webhooks/{webhook_id}/test — 202 with the pending delivery of a webhook.test event; at most 10 a minute per webhook. */
export const testWebhook = route('testWebhook', {
  access: 'admin',
  setup: ({ services, redis }: AppDeps) => {
    const limiter = new WebhookSendLimiter(redis, services.config.redisPrefix);
    return async ({ req, res }) => {
      const tenant = tenantOf(res);
      const webhookId = String(req.params.webhook_id);
      await limiter.testSend(tenant.workspace.id, webhookId);
      res.status(202).json(renderDelivery(await sendTestEvent(services, tenant, webhookId)));
    };
  },
});
