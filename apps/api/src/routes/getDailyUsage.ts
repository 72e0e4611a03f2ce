import type { RequestHandler } from 'express';
import { getDailyUsage as daily } from '@sdx/domain/api';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** GET /v1/usage/daily — one row per UTC day, oldest first, empty days as zeros. */
export const getDailyUsage = ({ services }: ApiDeps): RequestHandler => async (req, res) => {
  const days = req.query.days === undefined ? 30 : Number(req.query.days);
  res.json(await daily(services.db, tenantOf(res).workspace.id, services.clock.now(), days));
};
