import type { RequestHandler } from 'express';
import { renderDelivery, sendTestEvent } from '@sdx/domain';
import type { AppDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** POST /v1/webhooks/{webhook_id}/test — 202 with the pending delivery of a webhook.test event. */
export const testWebhook = ({ services }: AppDeps): RequestHandler => async (req, res) => {
  res.status(202).json(renderDelivery(await sendTestEvent(services, tenantOf(res), String(req.params.webhook_id))));
};
