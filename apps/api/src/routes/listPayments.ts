import type { RequestHandler } from 'express';
import { listPayments as list, renderPayment } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';
import { pageRequestOf, setNextLink } from './paging';

/** GET /v1/billing/payments — newest first; `starting_after` continues with older payments. */
export const listPayments = ({ services }: AppDeps): RequestHandler => async (req, res) => {
  const page = await list(services.db, tenantOf(res).workspace.id, pageRequestOf(req, 50));
  setNextLink(req, res, page.next);
  res.json({ data: page.rows.map(renderPayment), has_more: page.next !== null });
};
