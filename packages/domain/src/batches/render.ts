import type { BatchRow } from '@sdx/db';
import { renderDelivery } from '../destinations/render';
import type { BatchChildSummary, BatchCounts } from './queries';
import { deriveBatchStatus } from './status';

export interface BatchFlags {
  idempotent_replay?: boolean;
}

/** BatchResponse of api-v1.md 2.5: every key, always; `jobs` only when child summaries are given. */
export function renderBatch(batch: BatchRow, counts: BatchCounts, children: BatchChildSummary[] | null, flags: BatchFlags = {}) {
  return {
    id: batch.id,
    platform: batch.platform,
    operation: batch.operation,
    requested_limit: batch.requested_limit,
    include_posts: batch.include_posts,
    target_count: batch.target_count,
    status: deriveBatchStatus(batch, counts),
    queued_count: counts.queued,
    running_count: counts.running,
    completed_count: counts.completed,
    failed_count: counts.failed,
    cancelled_count: counts.cancelled,
    result_count: counts.resultCount,
    reserved_credits: counts.reservedCredits,
    billed_credits: counts.billedCredits,
    cancel_requested_at: batch.cancel_requested_at ? batch.cancel_requested_at.toISOString() : null,
    created_at: batch.created_at.toISOString(),
    ...(children ? { jobs: children.map((c) => ({ id: c.id, target: c.target, status: c.status })) } : {}),
    idempotent_replay: flags.idempotent_replay ?? false,
    delivery: renderDelivery(batch),
  };
}

export type BatchResponse = ReturnType<typeof renderBatch>;
