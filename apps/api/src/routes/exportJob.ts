import type { RequestHandler } from 'express';
import { jobExportRows, jobResultJson, prepareJobExport, resultPages } from '@sdx/domain';
import { writeCsv, writeJson, writeXlsx } from '@sdx/exports';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';
import { exportFormatOf, sendDownload, streamText } from './export-response';

/**
 * GET /v1/jobs/{job_id}/export — the stored result of a completed job, streamed page by page:
 * json as GET /v1/jobs/{job_id} shows `result`; csv/xlsx one row per result item.
 */
export const exportJob = ({ services }: ApiDeps): RequestHandler => async (req, res) => {
  const format = exportFormatOf(req);
  const { job, itemKinds } = await prepareJobExport(services.db, tenantOf(res), String(req.params.job_id));
  const tabular = { contextColumns: [], itemKinds };
  await sendDownload(res, 'job', job.id, format, (out) => {
    if (format === 'csv') return writeCsv(jobExportRows(services.db, job), out, tabular);
    if (format === 'xlsx') return writeXlsx(jobExportRows(services.db, job), out, tabular);
    if (job.include_posts > 0) return streamText(jobResultJson(services.db, job))(out);
    return writeJson(resultPages(services.db, job), out);
  });
};
