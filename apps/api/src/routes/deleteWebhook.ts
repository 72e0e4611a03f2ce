import type { RequestHandler } from 'express';
import { deleteWebhook as remove } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';

/** DELETE /v1/webhooks/{webhook_id} — 204; nothing more is sent to it. */
export const deleteWebhook = ({ services }: AppDeps): RequestHandler => async (req, res) => {
  await remove(services, tenantOf(res), String(req.params.webhook_id), actor(req, res));
  res.status(204).end();
};
