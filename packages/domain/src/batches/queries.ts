import { sql } from 'kysely';
import type { BatchRow, Executor, JobRow, JobStatus } from '@sdx/db';
import type { Tenant } from '../resources';
import { ApiError } from '../errors';
import { checkStartingAfter, type Page, pageOf, pageQuery, type PageRequest } from '../paging';

/** Aggregate of a batch's children: counts per status and the credit and result sums. */
export interface BatchCounts {
  queued: number;
  running: number;
  completed: number;
  failed: number;
  cancelled: number;
  /** Results delivered by completed children. */
  resultCount: number;
  /** Credits still held by children that are queued or running. */
  reservedCredits: number;
  billedCredits: number;
}

/** A child as the batch shows it. */
export interface BatchChildSummary {
  id: string;
  target: string;
  status: JobStatus;
}

export function emptyCounts(): BatchCounts {
  return { queued: 0, running: 0, completed: 0, failed: 0, cancelled: 0, resultCount: 0, reservedCredits: 0, billedCredits: 0 };
}

function addToCounts(counts: BatchCounts, status: JobStatus, n: number, results: number, reserved: number, billed: number): void {
  counts[status] += n;
  if (status === 'completed') counts.resultCount += results;
  if (status === 'queued' || status === 'running') counts.reservedCredits += reserved;
  counts.billedCredits += billed;
}

/** The same aggregate as countBatchChildren, from child rows already in hand (a new batch). */
export function aggregateChildren(
  jobs: Array<Pick<JobRow, 'status' | 'result_count' | 'reserved_credits' | 'billed_credits'>>,
): BatchCounts {
  const counts = emptyCounts();
  for (const job of jobs) addToCounts(counts, job.status, 1, job.result_count ?? 0, job.reserved_credits, job.billed_credits);
  return counts;
}

/** Every read is filtered by the tenant's workspace: another workspace's batch does not exist. */
export async function findBatch(db: Executor, tenant: Tenant, batchId: string): Promise<BatchRow | undefined> {
  return db.selectFrom('batches').selectAll().where('id', '=', batchId).where('workspace_id', '=', tenant.workspace.id).executeTakeFirst();
}

export async function getBatchOrThrow(db: Executor, tenant: Tenant, batchId: string): Promise<BatchRow> {
  const batch = await findBatch(db, tenant, batchId);
  if (!batch) throw new ApiError('batch_not_found', `No batch ${batchId} in this workspace.`, { batch_id: batchId });
  return batch;
}

/** A page of the workspace's batches, newest first (paging.ts), read off batches_workspace_idx. */
export async function listBatchRows(db: Executor, tenant: Tenant, page: PageRequest): Promise<Page<BatchRow>> {
  await checkStartingAfter(db, tenant, 'batches', page);
  return pageOf(await pageQuery(db.selectFrom('batches').selectAll(), tenant, page).execute(), page.limit);
}

/** Child counts and sums of several batches in one GROUP BY query. */
export async function countBatchChildren(db: Executor, tenant: Tenant, batchIds: string[]): Promise<Map<string, BatchCounts>> {
  return countChildrenOf(
    db,
    batchIds.map((id) => ({ id, workspace_id: tenant.workspace.id })),
  );
}

/** countBatchChildren for batches of any workspaces (each read within its own workspace): the webhook dispatcher's and the live streams'. */
export async function countChildrenOf(
  db: Executor,
  batches: ReadonlyArray<Pick<BatchRow, 'id' | 'workspace_id'>>,
): Promise<Map<string, BatchCounts>> {
  const out = new Map<string, BatchCounts>(batches.map((b) => [b.id, emptyCounts()]));
  if (batches.length === 0) return out;
  const rows = await db
    .selectFrom('jobs')
    .select([
      'batch_id',
      'workspace_id',
      'status',
      sql<number>`count(*)::int`.as('n'),
      sql<number>`coalesce(sum(result_count), 0)::int`.as('results'),
      sql<number>`coalesce(sum(reserved_credits), 0)::int`.as('reserved'),
      sql<number>`coalesce(sum(billed_credits), 0)::int`.as('billed'),
    ])
    .where('workspace_id', 'in', [...new Set(batches.map((b) => b.workspace_id))])
    .where(
      'batch_id',
      'in',
      batches.map((b) => b.id),
    )
    .groupBy(['batch_id', 'workspace_id', 'status'])
    .execute();
  const owner = new Map(batches.map((b) => [b.id, b.workspace_id]));
  for (const row of rows) {
    const counts = out.get(row.batch_id!);
    if (counts && owner.get(row.batch_id!) === row.workspace_id)
      addToCounts(counts, row.status, row.n, row.results, row.reserved, row.billed);
  }
  return out;
}

/** Child summaries of several batches, in target order, and their counts, from one query (one snapshot, so a batch's status always agrees with its jobs). */
export async function childSummaries(
  db: Executor,
  tenant: Tenant,
  batchIds: string[],
): Promise<{ children: Map<string, BatchChildSummary[]>; counts: Map<string, BatchCounts> }> {
  const children = new Map<string, BatchChildSummary[]>(batchIds.map((id) => [id, []]));
  const counts = new Map<string, BatchCounts>(batchIds.map((id) => [id, emptyCounts()]));
  if (batchIds.length === 0) return { children, counts };
  const rows = await db
    .selectFrom('jobs')
    .select(['id', 'batch_id', 'target', 'status', 'result_count', 'reserved_credits', 'billed_credits'])
    .where('workspace_id', '=', tenant.workspace.id)
    .where('batch_id', 'in', batchIds)
    .orderBy('batch_id')
    .orderBy('batch_position')
    .execute();
  for (const row of rows) {
    children.get(row.batch_id!)?.push({ id: row.id, target: row.target, status: row.status });
    const c = counts.get(row.batch_id!);
    if (c) addToCounts(c, row.status, 1, row.result_count ?? 0, row.reserved_credits, row.billed_credits);
  }
  return { children, counts };
}

/** Completed children of a batch in target order (what its export contains). */
export async function completedChildren(db: Executor, tenant: Tenant, batchId: string): Promise<JobRow[]> {
  return db
    .selectFrom('jobs')
    .selectAll()
    .where('workspace_id', '=', tenant.workspace.id)
    .where('batch_id', '=', batchId)
    .where('status', '=', 'completed')
    .orderBy('batch_position')
    .execute();
}
