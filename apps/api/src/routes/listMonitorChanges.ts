import { type ChangeKind, listMonitorChanges as list } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { pageRequestOf } from './paging';
import { route } from './route';

const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** GET /v1/monitors/{monitor_id}/changes — `{data, has_more}`, newest first. */
export const listMonitorChanges = route('listMonitorChanges', {
  access: 'viewer',
  handler: async ({ deps: { services }, req, res }) => {
    const query = { target: text(req.query.target), kind: text(req.query.kind) as ChangeKind | undefined };
    res.json(await list(services.db, tenantOf(res), String(req.params.monitor_id), query, pageRequestOf(req, 50)));
  },
});
