import type { RequestHandler } from 'express';
import { listWebhooks as list, renderWebhook } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** GET /v1/webhooks — newest first, never a secret. */
export const listWebhooks = ({ services }: AppDeps): RequestHandler => async (_req, res) => {
  res.json((await list(services.db, tenantOf(res))).map(renderWebhook));
};
