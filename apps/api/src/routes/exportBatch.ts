import {
  BATCH_CONTEXT_COLUMNS,
  batchExportItems,
  batchExportJson,
  batchExportLines,
  batchExportRows,
  prepareBatchExport,
} from '@sdx/domain/api';
import { writeCsv, writeXlsx } from '@sdx/exports';
import { tenantOf } from '../middleware/tenant';
import { exportFormatOf, sendDownload, streamText } from './export-response';
import { route } from './route';

/**
 * GET /v1/batches/{batch_id}/export — every completed child in target order, streamed: json an
 * array of {job_id, target, status, result_count, result}; ndjson one line {job_id, target, item}
 * per result item; csv/xlsx one row per result item led by batch_id, job_id, target. Large results together are a heavy read (bounded per workspace).
 */
export const exportBatch = route('exportBatch', {
  access: 'viewer',
  handler: async ({ deps: { services, heavyReads }, req, res }) => {
    const format = exportFormatOf(req);
    const tenant = tenantOf(res);
    const prepared = await prepareBatchExport(services.db, tenant, String(req.params.batch_id));
    const reads = {
      db: heavyReads.admit(res, tenant.workspace.id, batchExportItems(prepared), services.db),
      resultObjects: services.resultObjects,
    };
    const tabular = { contextColumns: BATCH_CONTEXT_COLUMNS, itemKinds: prepared.itemKinds };
    await sendDownload(res, 'batch', prepared.batch.id, format, (out) => {
      if (format === 'csv') return writeCsv(batchExportRows(reads, prepared), out, tabular);
      if (format === 'xlsx') return writeXlsx(batchExportRows(reads, prepared), out, tabular);
      if (format === 'ndjson') return streamText(batchExportLines(reads, prepared))(out);
      return streamText(batchExportJson(reads, prepared))(out);
    });
  },
});
