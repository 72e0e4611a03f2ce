import { sql } from 'kysely';
import type { Executor, JobRow } from '@sdx/db';
import type { Resources } from '../resources';
import { announce } from './announce';
import { enqueueAfterCommit, nextAttempt } from './enqueue';

/**
 * The job-state transitions back to queued (state.ts has the others): a failed attempt's job
 * retried later, the jobs of dead workers requeued, and a job handed back by a worker that is
 * shutting down. Each adds the job's next queue entry after commit (enqueueAfterCommit).
 */

/**
 * Puts the job of a failed attempt back in the queue for its next attempt at `next` (its queue
 * entry delayed until then), while the attempt holding `lease` still owns it; false otherwise.
 * `counted: false` gives the attempt back (the service's own store failed, not the job), so an
 * outage of the result store never uses up a job's attempts.
 */
export async function retryLater(
  services: Resources,
  jobId: string,
  lease: string,
  next: Date,
  message: string,
  options: { counted?: boolean } = {},
): Promise<boolean> {
  const requeued = await services.db
    .updateTable('jobs')
    .set({
      status: 'queued',
      next_attempt_at: next,
      lease_token: null,
      progress_stage: 'retrying',
      progress_message: message,
      enqueued_at: sql<Date>`now()`,
      ...(options.counted === false ? { attempts: sql<number>`greatest(attempts - 1, 0)` } : {}),
    })
    .where('id', '=', jobId)
    .where('lease_token', '=', lease)
    .where('status', '=', 'running')
    .returning(['id', 'attempts', 'batch_id', 'queue_priority'])
    .executeTakeFirst();
  if (!requeued) return false;
  announce(services, [requeued]);
  const delayMs = Math.max(0, next.getTime() - services.clock.now().getTime());
  await enqueueAfterCommit(services, [{ ...nextAttempt(requeued), delayMs }]);
  return true;
}

/**
 * Running jobs whose heartbeat stopped before `staleBefore` (their worker died) go back to
 * queued for their next attempt, up to `limit` of them; returns those requeued. The caller
 * fails the ones with no attempt left first (failJob with no lease).
 */
export async function requeueAbandoned(
  db: Executor,
  jobIds: readonly string[],
  staleBefore: Date,
): Promise<Array<Pick<JobRow, 'id' | 'attempts' | 'batch_id' | 'queue_priority'>>> {
  if (jobIds.length === 0) return [];
  return db
    .updateTable('jobs')
    .set({
      status: 'queued',
      lease_token: null,
      next_attempt_at: sql<Date>`now()`,
      progress_stage: 'retrying',
      progress_message: 'The worker stopped responding; retrying',
      enqueued_at: sql<Date>`now()`,
    })
    .where('id', 'in', [...jobIds])
    .where('status', '=', 'running')
    .where('heartbeat_at', '<', staleBefore)
    .where(sql<boolean>`attempts < max_attempts`)
    .returning(['id', 'attempts', 'batch_id', 'queue_priority'])
    .execute();
}

/**
 * Hands the job of an attempt that cannot finish back to the queue at once (its worker is
 * shutting down), while the attempt holding `lease` still owns it: queued and due now, its
 * attempt not counted (the worker chose to stop, the job did not fail), its checkpoint kept so
 * the next attempt resumes after the last saved page, and its entry added. False when the
 * attempt no longer owns the job (cancelled, or taken over).
 */
export async function handBack(services: Resources, jobId: string, lease: string): Promise<boolean> {
  const requeued = await services.db
    .updateTable('jobs')
    .set({
      status: 'queued',
      attempts: sql<number>`greatest(attempts - 1, 0)`,
      lease_token: null,
      next_attempt_at: sql<Date>`now()`,
      progress_stage: 'queued',
      progress_message: 'Handed back by a worker that shut down; waiting for another',
      enqueued_at: sql<Date>`now()`,
    })
    .where('id', '=', jobId)
    .where('lease_token', '=', lease)
    .where('status', '=', 'running')
    .returning(['id', 'attempts', 'batch_id', 'queue_priority'])
    .executeTakeFirst();
  if (!requeued) return false;
  announce(services, [requeued]);
  await enqueueAfterCommit(services, [nextAttempt(requeued)]);
  return true;
}
