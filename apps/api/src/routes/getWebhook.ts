import type { RequestHandler } from 'express';
import { getWebhookOrThrow, renderWebhook } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** GET /v1/webhooks/{webhook_id} — unknown or another workspace's: 404 webhook_not_found. */
export const getWebhook = ({ services }: AppDeps): RequestHandler => async (req, res) => {
  res.json(renderWebhook(await getWebhookOrThrow(services.db, tenantOf(res), String(req.params.webhook_id))));
};
