import type { RequestHandler } from 'express';
import { listMonitors as list, renderMonitor } from '@sdx/domain/api';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';
import { pageRequestOf, setNextLink } from './paging';

/** GET /v1/monitors — a page of the monitors that are not deleted, newest first; `Link` to the next. */
export const listMonitors = ({ services }: ApiDeps): RequestHandler => async (req, res) => {
  const page = await list(services.db, tenantOf(res), pageRequestOf(req, 50));
  setNextLink(req, res, page.next);
  res.json(page.rows.map(renderMonitor));
};
