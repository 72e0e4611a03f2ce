import { sql } from 'kysely';
import type { CreditBalanceRow, JobRow, NewJob, Tx } from '@sdx/db';
import type { Tenant } from '../context';
import { availableOf, insufficientCredits, lockBalance, reserveCredits } from '../credits/credits';
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
  /** The balance, when the caller already holds its lock in this transaction. */
  balance?: CreditBalanceRow;
}

/** Jobs of the workspace (batch children included) that are queued or running. */
export async function countActiveJobs(tx: Tx, workspaceId: string): Promise<number> {
  const row = await tx
    .selectFrom('jobs')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('status', 'in', ['queued', 'running'])
    .executeTakeFirstOrThrow();
  return row.n;
}

/**
 * Admits new queued jobs under the workspace's balance lock: the active-job cap and the credit
 * reservations are checked and taken in the same transaction, so concurrent submissions can
 * exceed neither. All or nothing: a batch whose targets do not all fit creates nothing.
 */
export async function admitJobs(tx: Tx, tenant: Tenant, now: Date, recipe: Recipe, targets: AdmitTarget[], options: AdmitOptions): Promise<JobRow[]> {
  const { workspace } = tenant;
  let balance = options.balance ?? (await lockBalance(tx, workspace.id, now, workspace.monthly_quota));
  const active = await countActiveJobs(tx, workspace.id);
  if (active + targets.length > workspace.max_active_jobs) {
    throw new ApiError(
      'concurrent_job_limit_exceeded',
      `This workspace has ${active} active jobs; its limit is ${workspace.max_active_jobs}.`,
      { active, limit: workspace.max_active_jobs, requested: targets.length },
    );
  }
  // The whole admission must fit: a 402 reports what all of it requires against what was available.
  const required = recipe.maxCredits * targets.length;
  const available = availableOf(balance, workspace, now);
  if (required > available.total) throw insufficientCredits(balance, available, required);
  const rows: NewJob[] = [];
  for (const [index, t] of targets.entries()) {
    const id = options.ids?.[index] ?? newId('job');
    balance = await reserveCredits(tx, workspace, balance, now, { jobId: id, credits: recipe.maxCredits, units: recipe.maxUnits });
    rows.push({
      id,
      workspace_id: workspace.id,
      batch_id: options.batchId ?? null,
      batch_position: options.batchId ? index : null,
      schedule_id: options.scheduleId ?? null,
      platform: recipe.platform,
      operation: recipe.operation,
      target: t.target,
      normalized_target: t.normalized,
      request_key: requestKey(recipe, t.normalized),
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
    });
  }
  if (rows.length === 0) return [];
  return tx.insertInto('jobs').values(rows).returningAll().execute();
}
