import type { RequestHandler } from 'express';
import { listBatchViews, renderBatch } from '@sdx/domain/api';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';
import { pageRequestOf, setNextLink } from './paging';

/** GET /v1/batches — a page, newest first, `Link` to the next; child summaries only with include_jobs=true. */
export const listBatches = ({ services }: ApiDeps): RequestHandler => async (req, res) => {
  const includeJobs = String(req.query.include_jobs ?? 'false') === 'true';
  const page = await listBatchViews(services.db, tenantOf(res), pageRequestOf(req, 25), { includeJobs });
  setNextLink(req, res, page.next);
  res.json(page.rows.map((v) => renderBatch(v.batch, v.counts, v.children)));
};
