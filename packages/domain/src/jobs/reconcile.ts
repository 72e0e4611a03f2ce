import type { Services } from '../context';
import { enqueueAfterCommit, failJob, nextAttempt, requeueAbandoned } from './state';

export interface ReconcileReport {
  requeued: number;
  failed: number;
  enqueued: number;
}

/**
 * Keeps Postgres and the queue from diverging for good:
 * - a running job whose heartbeat stopped (its worker died) goes back to queued for its next
 *   attempt, or fails with retries_exhausted (reservation released) when none is left;
 * - a queued job that is due but may have no queue entry (the process died between commit and
 *   enqueue, or Redis lost it) is enqueued again. Entry IDs are deterministic (per attempt, or
 *   the shared entry the job's row names), so re-adding an entry that still waits is a no-op.
 * Safe to run concurrently from several processes: every change is a guarded transition.
 */
export async function reconcileJobs(services: Services, options: { batchSize?: number; enqueueGraceMs?: number } = {}): Promise<ReconcileReport> {
  const { db, config } = services;
  const batchSize = options.batchSize ?? 500;
  const grace = options.enqueueGraceMs ?? Math.max(2000, config.heartbeatIntervalMs * 2);
  const report: ReconcileReport = { requeued: 0, failed: 0, enqueued: 0 };
  const now = services.clock.now();
  const staleBefore = new Date(now.getTime() - config.heartbeatTimeoutMs);

  const stale = await db
    .selectFrom('jobs')
    .select(['id', 'attempts', 'max_attempts'])
    .where('status', '=', 'running')
    .where('heartbeat_at', '<', staleBefore)
    .limit(batchSize)
    .execute();
  for (const job of stale.filter((j) => j.attempts >= j.max_attempts)) {
    const failed = await failJob(services, job.id, null, {
      code: 'retries_exhausted',
      message: `The worker running attempt ${job.attempts} stopped responding and no attempts are left.`,
      retryable: false,
    });
    if (failed) report.failed += 1;
  }
  const requeued = await requeueAbandoned(db, stale.filter((j) => j.attempts < j.max_attempts).map((j) => j.id), staleBefore);
  report.requeued = requeued.length;
  await enqueueAfterCommit(services, requeued.map(nextAttempt));

  const dueBefore = new Date(now.getTime() - grace);
  const due = await db
    .selectFrom('jobs')
    .select(['id', 'attempts', 'batch_id', 'queue_entry'])
    .where('status', '=', 'queued')
    .where((eb) => eb.or([eb.and([eb('next_attempt_at', 'is', null), eb('created_at', '<', dueBefore)]), eb('next_attempt_at', '<', dueBefore)]))
    .orderBy('created_at')
    .limit(batchSize)
    .execute();
  // A first attempt admitted in a shared entry is added under that entry's ID again: a no-op
  // while the entry still waits, one entry for those of its jobs still queued when it is gone.
  await enqueueAfterCommit(services, due.map((j) => ({ ...nextAttempt(j), entry: j.attempts === 0 ? j.queue_entry : null })));
  report.enqueued = due.length;
  return report;
}
