import type { RequestHandler } from 'express';
import { createWebhook as create, renderWebhook, type WebhookInput } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';

/** POST /v1/webhooks — 201 with the signing secret, shown in this response only. */
export const createWebhook = ({ services }: AppDeps): RequestHandler => async (req, res) => {
  const { webhook, secret } = await create(services, tenantOf(res), req.body as WebhookInput, actor(req, res));
  res.status(201).json({ ...renderWebhook(webhook), secret });
};
