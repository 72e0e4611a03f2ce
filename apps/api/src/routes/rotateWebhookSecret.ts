import type { RequestHandler } from 'express';
import { renderWebhook, rotateWebhookSecret as rotate } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';

/** POST /v1/webhooks/{webhook_id}/rotate-secret — the new secret, shown once; the old one signs beside it for 24 hours. */
export const rotateWebhookSecret = ({ services }: AppDeps): RequestHandler => async (req, res) => {
  const { webhook, secret } = await rotate(services, tenantOf(res), String(req.params.webhook_id), actor(req, res));
  res.json({ ...renderWebhook(webhook), secret });
};
