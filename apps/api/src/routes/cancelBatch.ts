import { cancelBatch as cancel, getBatchView, renderBatch } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** POST /v1/batches/{batch_id}/cancel — idempotent; answers the batch as it now is. */
export const cancelBatch = route('cancelBatch', {
  access: 'member',
  handler: async ({ deps: { services }, req, res }) => {
    const tenant = tenantOf(res);
    const batch = await cancel(services, tenant, String(req.params.batch_id));
    const view = await getBatchView(services.db, tenant, batch.id);
    res.json(renderBatch(view.batch, view.counts, view.children));
  },
});
