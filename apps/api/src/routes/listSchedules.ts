import { listScheduleViews, renderScheduleView } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { pageRequestOf, setNextLink } from './paging';
import { route } from './route';

/** GET /v1/schedules — a page of the schedules that are not deleted, newest first, with recent runs; `Link` to the next. */
export const listSchedules = route('listSchedules', {
  access: 'viewer',
  handler: async ({ deps: { services }, req, res }) => {
    const page = await listScheduleViews(services.db, tenantOf(res), pageRequestOf(req, 50));
    setNextLink(req, res, page.next);
    res.json(page.rows.map(renderScheduleView));
  },
});
