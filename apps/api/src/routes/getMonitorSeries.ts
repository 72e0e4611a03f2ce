import { readSeriesJson } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
const instant = (value: unknown) => (typeof value === 'string' ? new Date(value) : undefined);

/** GET /v1/monitors/{monitor_id}/series — the series matching the filters, points oldest first. */
export const getMonitorSeries = route('getMonitorSeries', {
  access: 'viewer',
  handler: async ({ deps: { services }, req, res }) => {
    const data = await readSeriesJson(services.db, tenantOf(res), String(req.params.monitor_id), {
      target: text(req.query.target),
      metric: text(req.query.metric),
      itemId: text(req.query.item_id),
      from: instant(req.query.from),
      to: instant(req.query.to),
    });
    // The series as Postgres wrote them (readSeriesJson): one string, sent once.
    res.type('application/json').send(`{"data":${data}}`);
  },
});
