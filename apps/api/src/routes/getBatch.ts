import type { RequestHandler } from 'express';
import { getBatchView, renderBatch } from '@sdx/domain/api';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** GET /v1/batches/{batch_id} — aggregate counts, settlement and child summaries. */
export const getBatch = ({ services }: ApiDeps): RequestHandler => async (req, res) => {
  const view = await getBatchView(services.db, tenantOf(res), String(req.params.batch_id));
  res.json(renderBatch(view.batch, view.counts, view.children));
};
