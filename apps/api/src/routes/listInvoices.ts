import { listInvoices as list, renderInvoice } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { pageRequestOf, setNextLink } from './paging';
import { route } from './route';

/** GET /v1/billing/invoices — newest first; `starting_after` continues with older invoices. */
export const listInvoices = route('listInvoices', {
  access: 'admin',
  handler: async ({ deps: { services }, req, res }) => {
    const page = await list(services.db, tenantOf(res).workspace.id, pageRequestOf(req, 50));
    setNextLink(req, res, page.next);
    res.json({ data: page.rows.map(renderInvoice), has_more: page.next !== null });
  },
});
