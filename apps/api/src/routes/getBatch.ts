import { getBatchView, renderBatch } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** GET /v1/batches/{batch_id} — aggregate counts, settlement and child summaries. */
export const getBatch = route('getBatch', {
  access: 'viewer',
  handler: async ({ deps: { services }, req, res }) => {
    const view = await getBatchView(services.db, tenantOf(res), String(req.params.batch_id));
    res.json(renderBatch(view.batch, view.counts, view.children));
  },
});
