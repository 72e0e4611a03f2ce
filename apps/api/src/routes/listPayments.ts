import { listPayments as list, renderPayment } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { pageRequestOf, setNextLink } from './paging';
import { route } from './route';

/** GET /v1/billing/payments — newest first; `starting_after` continues with older payments. */
export const listPayments = route('listPayments', {
  access: 'admin',
  handler: async ({ deps: { services }, req, res }) => {
    const page = await list(services.db, tenantOf(res).workspace.id, pageRequestOf(req, 50));
    setNextLink(req, res, page.next);
    res.json({ data: page.rows.map(renderPayment), has_more: page.next !== null });
  },
});
