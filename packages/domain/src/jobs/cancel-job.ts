import type { JobRow } from '@sdx/db';
import type { Services, Tenant } from '../context';
import { getJobOrThrow } from './queries';
import { announceEnded } from './announce';
import { cancelJobs } from './state';

/**
 * Cancels a queued or running job at once: status cancelled, reservation released, result
 * discarded. A running attempt notices at its next heartbeat or page and stops; whatever it
 * delivers afterwards is discarded because it no longer owns a running job. Repeating the call,
 * or cancelling a terminal job, returns the job unchanged.
 */
export async function cancelJob(services: Services, tenant: Tenant, jobId: string): Promise<JobRow> {
  const { job, cancelled } = await services.db.transaction().execute(async (tx) => {
    const job = await getJobOrThrow(tx, tenant, jobId);
    const [cancelled] = await cancelJobs(tx, services.clock.now(), [job.id], 'Cancelled by request');
    return { job, cancelled };
  });
  if (cancelled) announceEnded(services, [cancelled], 'cancelled', true);
  return cancelled ?? job;
}
