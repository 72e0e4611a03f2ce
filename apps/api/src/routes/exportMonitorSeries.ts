import { readSeries } from '@sdx/domain/api';
import { type ExportRow, writeCsv, writeXlsx } from '@sdx/exports';
import { tenantOf } from '../middleware/tenant';
import { exportFormatOf, sendDownload } from './export-response';
import { route } from './route';

/** The columns of a series export, one row per point. */
export const SERIES_EXPORT_COLUMNS = ['target', 'item_id', 'metric', 'at', 'value'];

const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
const instant = (value: unknown) => (typeof value === 'string' ? new Date(value) : undefined);

/**
 * GET /v1/monitors/{monitor_id}/series/export?format=csv|xlsx|json — the points of the series
 * GET …/series answers (same filters), one row per point: target, item_id, metric, at, value,
 * through the exports' csv and xlsx writers; json is the array of those rows.
 */
export const exportMonitorSeries = route('exportMonitorSeries', {
  access: 'viewer',
  handler: async ({ deps: { services }, req, res }) => {
    const format = exportFormatOf(req);
    const monitorId = String(req.params.monitor_id);
    const series = await readSeries(services.db, tenantOf(res), monitorId, {
      target: text(req.query.target),
      metric: text(req.query.metric),
      itemId: text(req.query.item_id),
      from: instant(req.query.from),
      to: instant(req.query.to),
    });
    const rows: ExportRow[] = series.flatMap((s) =>
      s.points.map((p) => ({ context: { target: s.target, item_id: s.item_id, metric: s.metric, at: p.at, value: p.value }, item: null })),
    );
    // eslint-disable-next-line @typescript-eslint/require-await -- the writers read an async source; these rows are in memory already
    async function* pages(): AsyncGenerator<ExportRow[]> {
      for (let i = 0; i < rows.length; i += 1000) yield rows.slice(i, i + 1000);
    }
    const tabular = { contextColumns: SERIES_EXPORT_COLUMNS, itemKinds: [], contextOnly: true };
    await sendDownload(res, 'monitor', monitorId, format, async (out) => {
      if (format === 'csv') return writeCsv(pages(), out, tabular);
      if (format === 'xlsx') return writeXlsx(pages(), out, tabular);
      out.end(JSON.stringify(rows.map((r) => r.context)));
    });
  },
});
