import { sql } from 'kysely';
import type { Services } from '../context';
import { enqueueJob } from './create-job';
import { failJob } from './run-job';

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
 * Safe to run concurrently from several processes: every change is a guarded UPDATE.
 */
export async function reconcileJobs(services: Services, options: { batchSize?: number; enqueueGraceMs?: number } = {}): Promise<ReconcileReport> {
  const { db, config } = services;
  const batchSize = options.batchSize ?? 500;
  const grace = options.enqueueGraceMs ?? Math.max(2000, config.heartbeatIntervalMs * 2);
  const report: ReconcileReport = { requeued: 0, failed: 0, enqueued: 0 };
  const staleBefore = sql<Date>`now() - make_interval(secs => ${config.heartbeatTimeoutMs / 1000})`;

  const stale = await db
    .selectFrom('jobs')
    .select(['id', 'attempts', 'max_attempts', 'batch_id'])
    .where('status', '=', 'running')
    .where('heartbeat_at', '<', staleBefore)
    .limit(batchSize)
    .execute();
  for (const job of stale) {
    if (job.attempts >= job.max_attempts) {
      const failed = await failJob(services, job, null, {
        code: 'retries_exhausted',
        message: `The worker running attempt ${job.attempts} stopped responding and no attempts are left.`,
        retryable: false,
      });
      if (failed) report.failed += 1;
      continue;
    }
    const requeued = await db
      .updateTable('jobs')
      .set({ status: 'queued', lease_token: null, next_attempt_at: sql<Date>`now()`, progress_stage: 'retrying', progress_message: 'The worker stopped responding; retrying' })
      .where('id', '=', job.id)
      .where('status', '=', 'running')
      .where('heartbeat_at', '<', staleBefore)
      .returning(['id', 'attempts', 'batch_id'])
      .executeTakeFirst();
    if (requeued) {
      report.requeued += 1;
      await enqueueJob(services, requeued);
    }
  }

  const due = await db
    .selectFrom('jobs')
    .select(['id', 'attempts', 'batch_id', 'queue_entry'])
    .where('status', '=', 'queued')
    .where((eb) =>
      eb.or([
        eb.and([eb('next_attempt_at', 'is', null), eb('created_at', '<', sql<Date>`now() - make_interval(secs => ${grace / 1000})`)]),
        eb('next_attempt_at', '<', sql<Date>`now() - make_interval(secs => ${grace / 1000})`),
      ]),
    )
    .orderBy('created_at')
    .limit(batchSize)
    .execute();
  if (due.length > 0) {
    // A first attempt admitted in a shared entry is added under that entry's ID again: a no-op
    // while the entry still waits, one entry for those of its jobs still queued when it is gone.
    await services.queues.enqueueMany(
      due.map((j) => ({ jobId: j.id, attempt: j.attempts + 1, batchChild: j.batch_id !== null, entry: j.attempts === 0 ? j.queue_entry : null })),
    );
    report.enqueued = due.length;
  }
  return report;
}
