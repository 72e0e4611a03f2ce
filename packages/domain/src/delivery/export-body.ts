import { pipeline } from 'node:stream/promises';
import { writeCsv, writeXlsx } from '@sdx/exports';
import type { Resources, Tenant } from '../resources';
import {
  BATCH_CONTEXT_COLUMNS,
  batchExportJson,
  batchExportLines,
  batchExportRows,
  jobExportRows,
  prepareBatchExport,
  prepareJobExport,
} from '../batches/exports';
import { resultItemLines, resultJson } from '../jobs/results';
import type { DestinationFormat } from '../destinations/destinations';

/**
 * The body of a delivery: the export of a job or batch in a format, written to `out` (and
 * ended) by the very readers and writers of GET /v1/jobs/{id}/export and GET
 * /v1/batches/{id}/export, slice by slice with backpressure, so the object holds the same bytes
 * as the download and a 25,000-item export is never in memory whole. Throws the export's errors
 * (results_expired, results_not_ready) before the first byte.
 */
export async function writeJobExport(
  services: Resources,
  tenant: Tenant,
  jobId: string,
  format: DestinationFormat,
  out: NodeJS.WritableStream,
): Promise<void> {
  const { job, itemKinds } = await prepareJobExport(services.db, tenant, jobId);
  const tabular = { contextColumns: [], itemKinds };
  if (format === 'csv') await writeCsv(jobExportRows(services, job), out, tabular);
  else if (format === 'xlsx') await writeXlsx(jobExportRows(services, job), out, tabular);
  else if (format === 'ndjson') await pipeline(resultItemLines(services, job), out);
  else await pipeline(resultJson(services, job), out);
}

export async function writeBatchExport(
  services: Resources,
  tenant: Tenant,
  batchId: string,
  format: DestinationFormat,
  out: NodeJS.WritableStream,
): Promise<void> {
  const prepared = await prepareBatchExport(services.db, tenant, batchId);
  const tabular = { contextColumns: BATCH_CONTEXT_COLUMNS, itemKinds: prepared.itemKinds };
  if (format === 'csv') await writeCsv(batchExportRows(services, prepared), out, tabular);
  else if (format === 'xlsx') await writeXlsx(batchExportRows(services, prepared), out, tabular);
  else if (format === 'ndjson') await pipeline(batchExportLines(services, prepared), out);
  else await pipeline(batchExportJson(services, prepared), out);
}
