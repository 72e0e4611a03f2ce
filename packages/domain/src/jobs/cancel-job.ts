import type { JobRow, Tx } from '@sdx/db';
import type { Services, Tenant } from '../context';
import { releaseReservation } from '../credits/credits';
import { getJobOrThrow } from './queries';

/**
 * Cancels a queued or running job at once: status cancelled, reservation released, result
 * discarded. A running attempt notices at its next heartbeat or page and stops; whatever it
 * delivers afterwards is discarded because it no longer owns a running job. Repeating the call,
 * or cancelling a terminal job, returns the job unchanged.
 */
export async function cancelJob(services: Services, tenant: Tenant, jobId: string): Promise<JobRow> {
  return services.db.transaction().execute(async (tx) => {
    const job = await getJobOrThrow(tx, tenant, jobId);
    const cancelled = await cancelJobInTx(tx, services.clock.now(), job.id, 'Cancelled by request');
    return cancelled ?? job;
  });
}

/** Cancels one job if it is still queued or running (also used by batch cancellation). */
export async function cancelJobInTx(tx: Tx, now: Date, jobId: string, message: string): Promise<JobRow | undefined> {
  const job = await tx
    .updateTable('jobs')
    .set({
      status: 'cancelled',
      cancel_requested_at: now,
      finished_at: now,
      progress_stage: 'cancelled',
      progress_message: message,
      next_attempt_at: null,
      lease_token: null,
      billed_credits: 0,
      billed_units: 0,
    })
    .where('id', '=', jobId)
    .where('status', 'in', ['queued', 'running'])
    .returningAll()
    .executeTakeFirst();
  if (!job) return undefined;
  await releaseReservation(tx, now, jobId, 'job cancelled');
  await tx.deleteFrom('job_result_pages').where('job_id', '=', jobId).execute();
  return job;
}
