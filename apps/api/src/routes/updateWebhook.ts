import type { RequestHandler } from 'express';
import { renderWebhook, updateWebhook as update, type WebhookChanges } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';

/** PATCH /v1/webhooks/{webhook_id} — a new URL is checked like a new webhook's. */
export const updateWebhook = ({ services }: AppDeps): RequestHandler => async (req, res) => {
  const row = await update(services, tenantOf(res), String(req.params.webhook_id), req.body as WebhookChanges, actor(req, res));
  res.json(renderWebhook(row));
};
