import type { RequestHandler } from 'express';
import { redeliver, renderDelivery } from '@sdx/domain';
import type { AppDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** POST /v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver — 202 with the new delivery (same event, same webhook-id). */
export const redeliverWebhookDelivery = ({ services }: AppDeps): RequestHandler => async (req, res) => {
  const delivery = await redeliver(services, tenantOf(res), String(req.params.webhook_id), String(req.params.delivery_id));
  res.status(202).json(renderDelivery(delivery));
};
