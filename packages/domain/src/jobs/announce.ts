import type { JobRow } from '@sdx/db';
import { recordJobFinished } from '@sdx/metrics';
import type { Resources } from '../resources';

/**
 * After commit: what the job-state transitions tell the rest of the system once their change is
 * durable. The live streams (extensions.md 6) hear of every change; this process's webhook
 * dispatcher is woken when events were written; jobs that ended are counted in the metrics.
 * Nothing here throws or waits.
 */

/**
 * Tells the live streams that these jobs changed (status or progress; a batch child's stream and
 * its batch's), and this process's webhook dispatcher when events were written.
 */
export function announce(
  services: Pick<Resources, 'live' | 'outbox'>,
  jobs: ReadonlyArray<Pick<JobRow, 'id' | 'batch_id'>>,
  eventsWritten = false,
): void {
  if (jobs.length > 0) services.live.publish(jobs.map((job) => ({ jobId: job.id, batchId: job.batch_id })));
  if (eventsWritten) services.outbox.written();
}

/**
 * Jobs that reached a terminal status (completed, failed or cancelled): counted in the metrics
 * (jobs finished), then announced. A terminal transition writes its webhook events where a
 * webhook takes them; `eventsWritten` says whether any were.
 */
export function announceEnded(
  services: Pick<Resources, 'live' | 'outbox'>,
  jobs: ReadonlyArray<Pick<JobRow, 'id' | 'batch_id' | 'platform' | 'operation'>>,
  status: 'completed' | 'failed' | 'cancelled',
  eventsWritten: boolean,
): void {
  for (const job of jobs) recordJobFinished(job.platform, job.operation, status);
  announce(services, jobs, eventsWritten);
}
