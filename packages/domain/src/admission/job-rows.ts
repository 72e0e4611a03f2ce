import type { JobRow, NewJob } from '@sdx/db';
import type { Recipe } from '../jobs/recipe';

/**
 * The rows of admitted jobs, as the planner (plan.ts) decides them: a queued job with its
 * maximum cost reserved, or a job completed from the cache; and the delivery columns a new job
 * or batch carries to its destination.
 */

/** One target of a submission, checked and normalized. */
export interface AdmitTarget {
  target: string;
  normalized: string;
  /** Its request key (requestKey, jobs/recipe.ts): the identity its cache and deduplication go by. */
  key: string;
}

export interface QueueOptions {
  maxAttempts: number;
  batchId?: string | null;
  batchPosition?: number | null;
  scheduleId?: string | null;
  newOnly?: boolean;
  requestId?: string | null;
  /** The deployment whose reconciler recovers the job. */
  deployment?: string | null;
  /** The priority of its queue entries (its rank among its workspace's active jobs). */
  priority?: number;
  /** A single job's delivery to a destination (Submission.delivery). */
  delivery?: { destinationId: string; key: string } | null;
}

/** The delivery columns of a new job or batch: pending from the start, due as soon as it ends. */
export function deliveryColumns(delivery: { destinationId: string; key: string } | null | undefined, now: Date) {
  if (!delivery) return {};
  return {
    destination_id: delivery.destinationId,
    delivery_status: 'pending' as const,
    delivery_key: delivery.key,
    delivery_next_attempt_at: now,
  };
}

/** The row of a newly admitted job, status queued, its maximum cost reserved and its rates recorded. */
export function queuedJobRow(
  workspaceId: string,
  now: Date,
  recipe: Recipe,
  target: AdmitTarget,
  id: string,
  options: QueueOptions,
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
    request_key: target.key,
    requested_limit: recipe.limit,
    include_posts: recipe.includePosts,
    status: 'queued',
    max_attempts: options.maxAttempts,
    progress_stage: 'queued',
    progress_message: 'Waiting for a worker',
    progress_total: null,
    ...recipe.rates,
    new_only: options.newOnly ?? false,
    request_id: options.requestId ?? null,
    reserved_credits: recipe.maxCredits,
    deployment: options.deployment ?? null,
    queue_priority: clampPriority(options.priority ?? 1),
    ...deliveryColumns(options.delivery, now),
    enqueued_at: now,
    created_at: now,
  };
}

/** Queue priorities run from 1 (first) to MAX_PRIORITY; ranks beyond share the last. */
export const MAX_PRIORITY = 2_000_000;

export function clampPriority(rank: number): number {
  return Math.max(1, Math.min(MAX_PRIORITY, Math.floor(rank)));
}

/** A new job that is already completed, reusing the fresh result of `fresh`: billed nothing. */
export function cachedJobRow(
  workspaceId: string,
  now: Date,
  fresh: JobRow,
  target: AdmitTarget,
  id: string,
  options: {
    maxAttempts: number;
    scheduleId: string | null;
    requestId: string | null;
    delivery?: { destinationId: string; key: string } | null;
  },
): NewJob {
  return {
    id,
    workspace_id: workspaceId,
    schedule_id: options.scheduleId,
    request_id: options.requestId,
    platform: fresh.platform,
    operation: fresh.operation,
    target: target.target,
    normalized_target: target.normalized,
    request_key: target.key,
    requested_limit: fresh.requested_limit,
    include_posts: fresh.include_posts,
    status: 'completed',
    attempts: 0,
    max_attempts: options.maxAttempts,
    progress_stage: 'completed',
    progress_message: `Reused the result of ${fresh.id}`,
    progress_current: fresh.result_count ?? 0,
    progress_total: fresh.result_count,
    result_count: fresh.result_count,
    billed_units: 0,
    credit_rate: fresh.credit_rate,
    results_per_credit: fresh.results_per_credit,
    base_credits: fresh.base_credits,
    bundle_credit_rate: fresh.bundle_credit_rate,
    bundle_results_per_credit: fresh.bundle_results_per_credit,
    bundle_base_credits: fresh.bundle_base_credits,
    reserved_credits: 0,
    billed_credits: 0,
    cached: true,
    source_job_id: fresh.id,
    ...deliveryColumns(options.delivery, now),
    created_at: now,
    started_at: now,
    finished_at: now,
  };
}
