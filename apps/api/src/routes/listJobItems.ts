import type { RequestHandler } from 'express';
import { ITEMS_PAGE_DEFAULT, readJobItems } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';
import { send } from './job-body';

/** GET /v1/jobs/{job_id}/items — one page of a completed result, its items written as Postgres read them. */
export const listJobItems = ({ services }: AppDeps): RequestHandler => async (req, res) => {
  const limit = Number(req.query.limit ?? ITEMS_PAGE_DEFAULT);
  const cursor = typeof req.query.cursor === 'string' ? req.query.cursor : null;
  const page = await readJobItems(services, tenantOf(res), String(req.params.job_id), { limit, cursor });
  async function* body(): AsyncGenerator<string> {
    yield `{"items":[${page.itemsJson}],"next_cursor":${JSON.stringify(page.nextCursor)}}`;
  }
  await send(res, 200, body());
};
