import type { JobRow } from '@sdx/db';
import type { EnqueueRequest } from '@sdx/queue';
import type { Resources } from '../resources';

/**
 * Queue entries of queued jobs, added after the transaction that queued them committed. The
 * queue only wakes workers: Postgres holds the jobs, and the reconciler (reconcile.ts) adds the
 * entries of jobs whose add failed or was lost.
 */

/** The queue entry of a queued job's next attempt (its own entry, not a shared one), at the job's priority. */
export function nextAttempt(job: Pick<JobRow, 'id' | 'attempts' | 'batch_id'> & { queue_priority?: number }): EnqueueRequest {
  return { jobId: job.id, attempt: job.attempts + 1, batchChild: job.batch_id !== null, priority: job.queue_priority };
}

/** The mark of a job whose queue entry could not be added: older than any reconciler's cutoff. */
export const ENQUEUE_FAILED = new Date(0);

/**
 * Adds the queue entries of jobs already committed as queued. The queue only wakes workers:
 * Postgres holds the jobs, so if Redis does not answer, the failure is logged and the
 * reconciler adds the entries once it does (entry IDs are deterministic, so adding twice adds
 * nothing); the jobs are then marked (ENQUEUE_FAILED) so its next pass takes them first.
 * Never throws; false when the entries could not be added.
 */
export async function enqueueAfterCommit(services: Resources, requests: readonly EnqueueRequest[]): Promise<boolean> {
  if (requests.length === 0) return true;
  try {
    await services.queues.enqueueMany(requests);
    return true;
  } catch (error) {
    services.log.warn({ err: error, jobs: requests.length }, 'enqueue failed; the reconciler will retry');
    await markEnqueueFailed(
      services,
      requests.map((r) => r.jobId),
    );
    return false;
  }
}

/** Marks queued jobs whose entries could not be added, so the next reconciler pass takes them first. Never throws. */
async function markEnqueueFailed(services: Resources, jobIds: readonly string[]): Promise<void> {
  try {
    await services.db
      .updateTable('jobs')
      .set({ enqueued_at: ENQUEUE_FAILED })
      .where('id', 'in', [...new Set(jobIds)])
      .where('status', '=', 'queued')
      .execute();
  } catch (error) {
    // The reconciler's periodic recheck still finds them.
    services.log.warn({ err: error, jobs: jobIds.length }, 'could not mark jobs whose enqueue failed');
  }
}
