import type { RequestHandler } from 'express';
import { listApiKeys, renderApiKey } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** GET /v1/keys — newest first, revoked ones included, never a secret. */
export const listKeys = ({ services }: AppDeps): RequestHandler => async (_req, res) => {
  res.json((await listApiKeys(services.db, tenantOf(res).workspace.id, services.clock.now())).map((key) => renderApiKey(key)));
};
