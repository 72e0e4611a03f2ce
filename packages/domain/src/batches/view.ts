import type { BatchRow, Executor } from '@sdx/db';
import type { Tenant } from '../resources';
import type { Page, PageRequest } from '../paging';
import {
  type BatchChildSummary,
  type BatchCounts,
  childSummaries,
  countBatchChildren,
  emptyCounts,
  getBatchOrThrow,
  listBatchRows,
} from './queries';

/** A batch with what its response needs: child aggregate and (optionally) child summaries. */
export interface BatchView {
  batch: BatchRow;
  counts: BatchCounts;
  children: BatchChildSummary[] | null;
}

/** GET /v1/batches/{batch_id}: one batch with counts and child summaries; 404 batch_not_found otherwise. */
export async function getBatchView(db: Executor, tenant: Tenant, batchId: string): Promise<BatchView> {
  const batch = await getBatchOrThrow(db, tenant, batchId);
  return (await viewsOf(db, tenant, [batch], true))[0];
}

/** GET /v1/batches: a page, newest first; three queries whatever the number of batches. */
export async function listBatchViews(
  db: Executor,
  tenant: Tenant,
  page: PageRequest,
  options: { includeJobs: boolean },
): Promise<Page<BatchView>> {
  const batches = await listBatchRows(db, tenant, page);
  return { rows: await viewsOf(db, tenant, batches.rows, options.includeJobs), next: batches.next };
}

export async function viewsOf(db: Executor, tenant: Tenant, batches: BatchRow[], includeJobs: boolean): Promise<BatchView[]> {
  const ids = batches.map((b) => b.id);
  // With jobs, counts and summaries come from the same rows: two queries could see two moments.
  const { counts, children } = includeJobs
    ? await childSummaries(db, tenant, ids)
    : { counts: await countBatchChildren(db, tenant, ids), children: null };
  return batches.map((batch) => ({
    batch,
    counts: counts.get(batch.id) ?? emptyCounts(),
    children: children ? (children.get(batch.id) ?? []) : null,
  }));
}
