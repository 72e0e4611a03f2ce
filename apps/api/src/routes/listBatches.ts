import type { RequestHandler } from 'express';
import { listBatchViews, renderBatch } from '@sdx/domain';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** GET /v1/batches — newest first; child summaries only with include_jobs=true. */
export const listBatches = ({ services }: ApiDeps): RequestHandler => async (req, res) => {
  const limit = Number(req.query.limit ?? 25);
  const includeJobs = String(req.query.include_jobs ?? 'false') === 'true';
  const views = await listBatchViews(services.db, tenantOf(res), { limit, includeJobs });
  res.json(views.map((v) => renderBatch(v.batch, v.counts, v.children)));
};
