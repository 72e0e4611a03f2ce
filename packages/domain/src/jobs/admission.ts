import { sql } from 'kysely';
import { type CreditBalanceRow, type JobRow, type NewJob, thenCommit, together, type Tx, type WorkspaceRow } from '@sdx/db';
import type { Tenant } from '../context';
import { availableOf, balanceLock, insufficientCredits, type PlannedReservation, planReservation, rollLocked, withReservations } from '../credits/credits';
import { ApiError } from '../errors';
import { newId } from '../ids';
import { type Recipe, requestKey } from './recipe';

export interface AdmitTarget {
  target: string;
  normalized: string;
}

export interface AdmitOptions {
  maxAttempts: number;
  batchId?: string | null;
  scheduleId?: string | null;
  /** Job IDs to use (the first may be pre-allocated for an idempotency claim). */
  ids?: string[];
}

/**
 * Admits new queued jobs under the workspace's balance lock: the active-job cap and the credit
 * reservations are checked and taken in the same transaction, so concurrent submissions can
 * exceed neither. All or nothing: a batch whose targets do not all fit creates nothing.
 * However many targets, the writes are four statements (reservations, ledger, balance, jobs).
 */
export async function admitJobs(tx: Tx, tenant: Tenant, now: Date, recipe: Recipe, targets: AdmitTarget[], options: AdmitOptions): Promise<JobRow[]> {
  const { workspace } = tenant;
  const locked = await lockForAdmission(tx, [workspace], now);
  let balance = locked.balances.get(workspace.id)!;
  checkActiveCap(workspace, locked.active.get(workspace.id) ?? 0, targets.length);
  // The whole admission must fit: a 402 reports what all of it requires against what was available.
  const required = recipe.maxCredits * targets.length;
  const available = availableOf(balance, workspace, now);
  if (required > available.total) throw insufficientCredits(balance, available, required);
  const rows: NewJob[] = [];
  const planned: PlannedReservation[] = [];
  for (const [index, t] of targets.entries()) {
    const id = options.ids?.[index] ?? newId('job');
    const next = planReservation(workspace, balance, now, { jobId: id, credits: recipe.maxCredits, units: recipe.maxUnits });
    balance = next.balance;
    planned.push(next.planned);
    rows.push(queuedJobRow(workspace.id, now, recipe, t, requestKey(recipe, t.normalized), id, { ...options, batchPosition: options.batchId ? index : null }));
  }
  return writeAdmissions(tx, now, planned, [balance], rows);
}

/** A request whose queued, running or fresh completed twin an admission may reuse. */
export interface ReuseLookup {
  requests: Array<{ workspaceId: string; key: string }>;
  /** Completed results finished after this are fresh enough to be reused (the cache). */
  cacheFrom: Date;
}

export interface AdmissionState {
  balances: Map<string, CreditBalanceRow>;
  /** Active (queued or running) jobs per workspace. */
  active: Map<string, number>;
  /** By reuseKey(workspace, request key): the queued or running twin, else the latest fresh completed job. */
  reusable: Map<string, JobRow>;
}

export function reuseKey(workspaceId: string, key: string): string {
  return `${workspaceId}\u0000${key}`;
}

/**
 * Locks the balance rows of `workspaces` (in workspace_id order, as every multi-workspace locker
 * does), then reads each one's active-job count and the reusable twin of each request. The reads
 * are statements of their own, after the lock: a statement's snapshot is taken when it starts,
 * so reads inside the locking statement would miss the jobs of the admission it waited for, and
 * admit past the cap or beside a twin. The statements travel in one message (together), which
 * keeps that order.
 */
export async function lockForAdmission(
  tx: Tx,
  workspaces: ReadonlyArray<Pick<WorkspaceRow, 'id' | 'monthly_quota'>>,
  now: Date,
  reuse: ReuseLookup | null = null,
): Promise<AdmissionState> {
  const requests = [...new Map((reuse?.requests ?? []).map((r) => [reuseKey(r.workspaceId, r.key), r])).values()];
  // Two reads, each planned on its own: joined into one statement (a union of the twins and
  // the counts), they cost Postgres more to plan than to run.
  const twins = sql<JobRow>`
    select j.*
    from unnest(${requests.map((r) => r.workspaceId)}::text[], ${requests.map((r) => r.key)}::text[]) as k(workspace_id, request_key)
    cross join lateral (
      (select * from jobs
        where workspace_id = k.workspace_id and request_key = k.request_key and status in ('queued', 'running')
        limit 1)
      union all
      (select * from jobs
        where workspace_id = k.workspace_id and request_key = k.request_key and status = 'completed' and not cached
          and finished_at > ${reuse?.cacheFrom ?? now}
        order by finished_at desc
        limit 1)
      limit 1
    ) j
  `;
  const counts = sql<{ workspace_id: string; n: number }>`
    select workspace_id, count(*)::int as n
    from jobs
    where workspace_id = any(${[...new Set(workspaces.map((w) => w.id))]}::text[]) and status in ('queued', 'running')
    group by workspace_id
  `;
  // The lock and the reads go in one message; the reads still start after the lock is held.
  const lock = balanceLock(tx, workspaces).compile();
  let locked: CreditBalanceRow[];
  let actives: Array<{ workspace_id: string; n: number }>;
  let found: JobRow[] = [];
  if (requests.length > 0) [locked, actives, found] = await together(tx, lock, counts.compile(tx), twins.compile(tx));
  else [locked, actives] = await together(tx, lock, counts.compile(tx));
  const balances = await rollLocked(tx, locked, workspaces, now);
  const active = new Map(actives.map((row) => [row.workspace_id, row.n]));
  const reusable = new Map(found.map((job) => [reuseKey(job.workspace_id, job.request_key), job]));
  return { balances, active, reusable };
}

/**
 * Writes an admission in one statement: the reservations, their ledger entries, the reserved
 * totals of each (locked) balance as planned, and the job rows, which it returns. `last`: it is
 * the transaction's last statement, and its COMMIT goes with it (see thenCommit).
 */
export async function writeAdmissions(
  tx: Tx,
  now: Date,
  planned: PlannedReservation[],
  balances: CreditBalanceRow[],
  jobs: NewJob[],
  { last = false }: { last?: boolean } = {},
): Promise<JobRow[]> {
  if (jobs.length === 0) return [];
  const end = last ? thenCommit : sql``;
  if (planned.length === 0) return tx.insertInto('jobs').values(jobs).returningAll().modifyEnd(end).execute();
  return withReservations(tx, planned, balances, now)
    .insertInto('jobs')
    .values(jobs)
    .returningAll()
    .modifyEnd(end)
    .execute();
}

/** 429 concurrent_job_limit_exceeded unless `adding` more active jobs fit under the cap. */
export function checkActiveCap(workspace: Pick<WorkspaceRow, 'max_active_jobs'>, active: number, adding: number): void {
  if (active + adding > workspace.max_active_jobs) {
    throw new ApiError(
      'concurrent_job_limit_exceeded',
      `This workspace has ${active} active jobs; its limit is ${workspace.max_active_jobs}.`,
      { active, limit: workspace.max_active_jobs, requested: adding },
    );
  }
}

/** The row of a newly admitted job, status queued, its maximum cost reserved; `key` is its requestKey. */
export function queuedJobRow(
  workspaceId: string,
  now: Date,
  recipe: Recipe,
  target: AdmitTarget,
  key: string,
  id: string,
  options: { maxAttempts: number; batchId?: string | null; batchPosition?: number | null; scheduleId?: string | null },
): NewJob {
  return {
    id,
    workspace_id: workspaceId,
    batch_id: options.batchId ?? null,
    batch_position: options.batchPosition ?? null,
    schedule_id: options.scheduleId ?? null,
    platform: recipe.platform,
    operation: recipe.operation,
    target: target.target,
    normalized_target: target.normalized,
    request_key: key,
    requested_limit: recipe.limit,
    include_posts: recipe.includePosts,
    status: 'queued',
    max_attempts: options.maxAttempts,
    progress_stage: 'queued',
    progress_message: 'Waiting for a worker',
    progress_total: null,
    credit_rate: recipe.spec.credits_per_result,
    results_per_credit: recipe.spec.results_per_credit,
    base_credits: recipe.spec.base_credits,
    reserved_credits: recipe.maxCredits,
    created_at: now,
  };
}
