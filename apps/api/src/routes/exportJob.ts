import { jobExportRows, prepareJobExport, resultItemLines, resultJson } from '@sdx/domain/api';
import { writeCsv, writeXlsx } from '@sdx/exports';
import { tenantOf } from '../middleware/tenant';
import { exportFormatOf, sendDownload, streamText } from './export-response';
import { route } from './route';

/**
 * GET /v1/jobs/{job_id}/export — the stored result of a completed job, streamed slice by slice:
 * json as GET /v1/jobs/{job_id} shows `result`; ndjson one item per line; csv/xlsx one row per
 * result item. A large result is a heavy read (bounded per workspace).
 */
export const exportJob = route('exportJob', {
  access: 'viewer',
  handler: async ({ deps: { services, heavyReads }, req, res }) => {
    const format = exportFormatOf(req);
    const tenant = tenantOf(res);
    const { job, itemKinds } = await prepareJobExport(services.db, tenant, String(req.params.job_id));
    const reads = {
      db: heavyReads.admit(res, tenant.workspace.id, job.result_count ?? 0, services.db),
      resultObjects: services.resultObjects,
    };
    const tabular = { contextColumns: [], itemKinds };
    await sendDownload(res, 'job', job.id, format, (out) => {
      if (format === 'csv') return writeCsv(jobExportRows(reads, job), out, tabular);
      if (format === 'xlsx') return writeXlsx(jobExportRows(reads, job), out, tabular);
      if (format === 'ndjson') return streamText(resultItemLines(reads, job))(out);
      return streamText(resultJson(reads, job))(out);
    });
  },
});
