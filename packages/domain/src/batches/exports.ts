import { bundlePostsSpec, findOperation, type ItemKind, type Platform } from '@sdx/catalog';
import type { BatchRow, Executor, JobRow } from '@sdx/db';
import type { Tenant } from '../resources';
import { ApiError } from '../errors';
import { getKeptResultOrThrow } from '../jobs/queries';
import type { ResultAccess } from '../jobs/result-slices';
import { resultItemLines, resultJson, resultPages } from '../jobs/results';
import { completedChildren, getBatchOrThrow } from './queries';

/**
 * Downloads of stored results (GET /v1/jobs/{id}/export, GET /v1/batches/{id}/export). They read
 * job_result_pages in keyset slices (jobs/results.ts) and hand each on as it comes, the next read
 * only once the last is written, so neither a 25,000-item job nor a 100-child batch is ever held
 * in memory whole. No credits, no extraction.
 */

/** One tabular export row: leading context cells and one result item. */
export interface ExportRowSource {
  context?: Record<string, string | number | null>;
  item: unknown;
}

export const BATCH_CONTEXT_COLUMNS = ['batch_id', 'job_id', 'target'];

/** Item kinds a job of this recipe can deliver: the operation's, plus the posts of a profile bundle. */
export function exportItemKinds(platform: string, operation: string, includePosts: number): ItemKind[] {
  const spec = findOperation(platform, operation);
  const kinds: ItemKind[] = spec ? [spec.itemKind] : [];
  if (includePosts > 0) {
    const posts = bundlePostsSpec(platform as Platform);
    if (posts && !kinds.includes(posts.itemKind)) kinds.push(posts.itemKind);
  }
  return kinds;
}

export interface JobExport {
  job: JobRow;
  itemKinds: ItemKind[];
}

/** A completed job of the workspace with its result kept; 404 job_not_found, 409 results_not_ready, 410 results_expired. */
export async function prepareJobExport(db: Executor, tenant: Tenant, jobId: string): Promise<JobExport> {
  const job = await getKeptResultOrThrow(db, tenant, jobId);
  return { job, itemKinds: exportItemKinds(job.platform, job.operation, job.include_posts) };
}

export interface BatchExport {
  batch: BatchRow;
  /** Completed children in target order. */
  children: JobRow[];
  itemKinds: ItemKind[];
}

/**
 * A batch of the workspace with at least one completed child; 404 batch_not_found, 409
 * results_not_ready, and 410 results_expired once a completed child's result has been deleted
 * by the retention purge (the combined result is no longer whole).
 */
export async function prepareBatchExport(db: Executor, tenant: Tenant, batchId: string): Promise<BatchExport> {
  const batch = await getBatchOrThrow(db, tenant, batchId);
  const children = await completedChildren(db, tenant, batch.id);
  if (children.length === 0) {
    throw new ApiError('results_not_ready', `Batch ${batch.id} has no completed child yet; it can be exported once one has completed.`, {
      batch_id: batch.id,
    });
  }
  const expired = children.filter((child) => child.result_expired).map((child) => child.id);
  if (expired.length > 0) {
    throw new ApiError(
      'results_expired',
      `The results of ${expired.length} of the completed jobs of batch ${batch.id} were deleted after the retention period.`,
      {
        batch_id: batch.id,
        job_ids: expired,
      },
    );
  }
  return { batch, children, itemKinds: exportItemKinds(batch.platform, batch.operation, batch.include_posts) };
}

/** Result items a batch export streams (its heavy-read weight). */
export function batchExportItems(prepared: BatchExport): number {
  return prepared.children.reduce((n, child) => n + (child.result_count ?? 0), 0);
}

/** Items per slice of a csv/xlsx export: parsed items weigh several times their text. */
const TABULAR_SLICE_ITEMS = 50;

/** Rows of a job's csv/xlsx: one per result item (a profile bundle: the profile, then its posts). */
export async function* jobExportRows(store: ResultAccess, job: Pick<JobRow, 'id' | 'source_job_id'>): AsyncGenerator<ExportRowSource[]> {
  for await (const page of resultPages(store, job, TABULAR_SLICE_ITEMS)) yield page.map((item) => ({ item }));
}

/** Rows of a batch's csv/xlsx: every completed child's items in target order, led by batch_id, job_id, target. */
export async function* batchExportRows(store: ResultAccess, prepared: BatchExport): AsyncGenerator<ExportRowSource[]> {
  for (const child of prepared.children) {
    const context = { batch_id: prepared.batch.id, job_id: child.id, target: child.target };
    for await (const page of resultPages(store, child, TABULAR_SLICE_ITEMS)) yield page.map((item) => ({ context, item }));
  }
}

/**
 * A batch's ndjson export as text chunks: one line per result item, `{job_id, target, item}`,
 * the completed children in target order, each item's text as Postgres writes it.
 */
export async function* batchExportLines(store: ResultAccess, prepared: BatchExport): AsyncGenerator<string> {
  for (const child of prepared.children) {
    const head = `{"job_id":${JSON.stringify(child.id)},"target":${JSON.stringify(child.target)},"item":`;
    yield* resultItemLines(store, child, (item) => `${head}${item}}`);
  }
}

/**
 * A batch's json export as text chunks: an array, in target order, of
 * {job_id, target, status, result_count, result} for the completed children, each result
 * streamed from its pages.
 */
export async function* batchExportJson(store: ResultAccess, prepared: BatchExport): AsyncGenerator<string> {
  yield '[';
  for (const [index, child] of prepared.children.entries()) {
    const head = {
      job_id: child.id,
      target: child.target,
      status: child.status,
      result_count: child.result_count,
    };
    const open = JSON.stringify(head);
    yield `${index === 0 ? '' : ','}${open.slice(0, -1)},"result":`;
    yield* resultJson(store, child);
    yield '}';
  }
  yield ']';
}
