import { listMonitors as list, renderMonitor } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { pageRequestOf, setNextLink } from './paging';
import { route } from './route';

/** GET /v1/monitors — a page of the monitors that are not deleted, newest first; `Link` to the next. */
export const listMonitors = route('listMonitors', {
  access: 'viewer',
  handler: async ({ deps: { services }, req, res }) => {
    const page = await list(services.db, tenantOf(res), pageRequestOf(req, 50));
    setNextLink(req, res, page.next);
    res.json(page.rows.map(renderMonitor));
  },
});
