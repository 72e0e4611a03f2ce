import { ITEMS_PAGE_DEFAULT, readJobItems } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { send } from './job-body';
import { route } from './route';

/** GET /v1/jobs/{job_id}/items — one page of a completed result, its items written as Postgres read them. */
export const listJobItems = route('listJobItems', {
  access: 'viewer',
  handler: async ({ deps: { services }, req, res }) => {
    const limit = Number(req.query.limit ?? ITEMS_PAGE_DEFAULT);
    const cursor = typeof req.query.cursor === 'string' ? req.query.cursor : null;
    const offset = req.query.offset === undefined ? null : Number(req.query.offset);
    async function* body(): AsyncGenerator<string> {
      const page = await readJobItems(services, tenantOf(res), String(req.params.job_id), { limit, cursor, offset });
      yield `{"items":[${page.itemsJson}],"next_cursor":${JSON.stringify(page.nextCursor)}}`;
    }
    await send(res, 200, body());
  },
});
