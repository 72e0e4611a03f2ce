import type { BatchRow } from '@sdx/db';
import type { BatchCounts } from './queries';

export type BatchStatus = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';

/**
 * Batch status, derived from its children (decisions.md, Batches): queued while every child is
 * queued; running while any child is not terminal; once all are terminal, cancelled if cancel
 * was requested, else completed when at least one completed and failed when none did.
 */
export function deriveBatchStatus(batch: Pick<BatchRow, 'cancel_requested_at'>, counts: BatchCounts): BatchStatus {
  const total = counts.queued + counts.running + counts.completed + counts.failed + counts.cancelled;
  const active = counts.queued + counts.running;
  if (active > 0) return counts.queued === total ? 'queued' : 'running';
  if (batch.cancel_requested_at !== null) return 'cancelled';
  return counts.completed > 0 ? 'completed' : 'failed';
}
