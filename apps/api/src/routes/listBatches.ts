import { listBatchViews, renderBatch } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { pageRequestOf, setNextLink } from './paging';
import { route } from './route';

/** GET /v1/batches — a page, newest first, `Link` to the next; child summaries only with include_jobs=true. */
export const listBatches = route('listBatches', {
  access: 'viewer',
  handler: async ({ deps: { services }, req, res, query }) => {
    const includeJobs = query.include_jobs ?? false;
    const page = await listBatchViews(services.db, tenantOf(res), pageRequestOf(req, 25), { includeJobs });
    setNextLink(req, res, page.next);
    res.json(page.rows.map((v) => renderBatch(v.batch, v.counts, v.children)));
  },
});
