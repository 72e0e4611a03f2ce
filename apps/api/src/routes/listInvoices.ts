import type { RequestHandler } from 'express';
import { listInvoices as list, renderInvoice } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';
import { pageRequestOf, setNextLink } from './paging';

/** GET /v1/billing/invoices — newest first; `starting_after` continues with older invoices. */
export const listInvoices = ({ services }: AppDeps): RequestHandler => async (req, res) => {
  const page = await list(services.db, tenantOf(res).workspace.id, pageRequestOf(req, 50));
  setNextLink(req, res, page.next);
  res.json({ data: page.rows.map(renderInvoice), has_more: page.next !== null });
};
