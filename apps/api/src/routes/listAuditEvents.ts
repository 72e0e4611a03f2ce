import { listAuditEvents as list, renderAuditEvent } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** GET /v1/audit-events — newest first; `starting_after` continues with older events. */
export const listAuditEvents = route('listAuditEvents', {
  access: 'admin',
  handler: async ({ deps: { services }, req, res }) => {
    const limit = Number(req.query.limit ?? 50);
    const startingAfter = typeof req.query.starting_after === 'string' ? req.query.starting_after : null;
    res.json((await list(services.db, tenantOf(res).workspace.id, { limit, startingAfter })).map(renderAuditEvent));
  },
});
