import { sql } from 'kysely';
import type { Executor, JobRow, NewJob, Tx } from '@sdx/db';
import type { Balance } from '../credits/balances';
import type { PlannedReservation } from '../credits/balances';
import { releaseReservations, withReservations } from '../credits/reservations';
import { type FlushResult, GroupCommit } from '../group-commit';
import type { Resources } from '../resources';
import { endingCandidates, recordEvents } from '../webhooks/events';
import { announce, announceEnded } from './announce';
import { deleteObjectsQuietly, pageBody, type PageBody } from './result-pages';

/**
 * The job-state module: every transition of a job's status (api-v1.md 3) is one function here,
 * for single jobs and batch children alike.
 *
 *   queue     (new)              → queued       queueJobs
 *   claim     queued | abandoned → running      claimJobs
 *   heartbeat running            → running      heartbeat
 *   progress  running            → running      saveProgress (a checkpointed page)
 *   retry     running            → queued       retryLater; abandoned running → queued: requeueAbandoned (requeue.ts)
 *   hand back running            → queued       handBack, requeue.ts (its worker is shutting down; the attempt is not counted)
 *   complete  running            → completed    completeJobs, complete.ts (billed: the reservation settled)
 *   fail      queued | running   → failed       failJob     ┐ one path that ends without billing:
 *   cancel    queued | running   → cancelled    cancelJobs  ┘ endWithoutBilling (reservation released)
 *
 * A running job is owned by the attempt holding its lease token: every write of an attempt
 * requires that token and status running, so a stale or duplicate delivery, a cancelled job or a
 * second worker can never deliver, bill or fail it twice. Queue entries are added after commit
 * by enqueueAfterCommit; if that fails, the reconciler adds them later.
 *
 * Each job records the deployment that admitted it (its reconciler recovers it), when its queue
 * entry was last added (enqueued_at, which the reconcilers claim rows by) and the priority of
 * its entries (queue_priority: its rank among its workspace's active jobs at admission).
 *
 * Every terminal transition writes its webhook events (webhooks/events.ts) in its own
 * transaction, when a webhook of the workspace takes them: the job's `job.<status>` and, for a
 * batch child, the check of its batch. After commit, each change is announced (announce.ts:
 * the live streams, the webhook dispatcher, the metrics of ended jobs).
 *
 * The transitions back to queued (a retry, an abandoned attempt, a job handed back) are in
 * requeue.ts beside this file. The billed transition, completion, is in complete.ts beside it:
 * its statement settles the reservation (the money module's claim and booking) in the job's own
 * transaction.
 *
 * The attempts of one worker process claim through `GroupJobClaims` (below) and complete
 * through `GroupJobCompletions` (complete.ts): attempts running at once share one claim
 * statement and one completion transaction.
 */

export interface JobError {
  code: string;
  message: string;
  retryable: boolean;
  [context: string]: unknown;
}

// ---------------------------------------------------------------------------------------------
// Queue

/**
 * Inserts admitted jobs (queued, or completed from the cache) with the reservations planned for
 * them, in one statement: the reservations, their ledger entries, the reserved totals of each
 * (locked) balance, and the job rows, which it returns. Jobs completed from the cache have
 * their webhook events written.
 */
export async function queueJobs(tx: Tx, now: Date, rows: NewJob[], planned: PlannedReservation[], balances: Balance[]): Promise<JobRow[]> {
  if (rows.length === 0) return [];
  const inserted =
    planned.length === 0
      ? await tx.insertInto('jobs').values(rows).returningAll().execute()
      : await withReservations(tx, planned, balances, now).insertInto('jobs').values(rows).returningAll().execute();
  // A job served from the cache is completed as it is admitted: it tells job.completed at once.
  const cached = inserted.filter((job) => job.status === 'completed');
  if (cached.length > 0) await recordEvents(tx, now, endingCandidates(cached));
  return inserted;
}

// ---------------------------------------------------------------------------------------------
// Claim

/**
 * Claims jobs for one attempt each: every claimable job comes back running under a fresh lease
 * token; null for a job that is not claimable (running and alive, terminal, or not yet due).
 * When one job appears twice (two deliveries of it), the first gets it and the other is
 * skipped, as the second of two consecutive claims would be.
 */
export async function claimJobs(services: Resources, jobIds: readonly string[]): Promise<FlushResult<JobRow | null>> {
  const { rows } = await claimStatement(services, jobIds).execute(services.db);
  announce(services, rows);
  const claimed = new Map(rows.map((row) => [row.id, row]));
  return jobIds.map((id) => {
    const row = claimed.get(id);
    if (!row) return null;
    claimed.delete(id);
    return row;
  });
}

/**
 * The claim statement, built and not run. Queued and due, or running with a dead heartbeat and
 * an attempt left, is claimable. The rows are locked in id order first, so the claims of several
 * worker processes racing over the same jobs cannot deadlock.
 *
 * The claimable test is computed in the locking CTE's select list, not in a WHERE clause: after
 * a lock wait, Postgres re-evaluates the locked row's latest version (EvalPlanQual), so a job
 * claimed meanwhile by another worker reads as not claimable. Kept out of every WHERE clause, it
 * also cannot steer the planner to the partial status indexes (a bitmap scan of every active job
 * instead of a few primary-key lookups).
 */
export function claimStatement(services: Resources, jobIds: readonly string[]) {
  const ids = [...new Set(jobIds)];
  return sql<JobRow>`
    with c as materialized (
      select l.id, (
        (l.status = 'queued' and (l.next_attempt_at is null or l.next_attempt_at <= now() + interval '1 second'))
        or (l.status = 'running' and l.heartbeat_at < now() - make_interval(secs => ${services.config.heartbeatTimeoutMs / 1000})
            and l.attempts < l.max_attempts)
      ) as claimable
      from jobs l
      where l.id = any(${ids}::text[])
      order by l.id
      for update
    )
    update jobs j
    set status = 'running',
        attempts = j.attempts + 1,
        lease_token = gen_random_uuid()::text,
        started_at = coalesce(j.started_at, now()),
        heartbeat_at = now(),
        next_attempt_at = null,
        progress_stage = 'running',
        progress_message = 'Extracting'
    from c
    where j.id = c.id and c.claimable
    returning j.*
  `;
}

// ---------------------------------------------------------------------------------------------
// Heartbeat and progress

/** Records that the attempt holding `lease` is alive; false when it no longer owns the job. */
export async function heartbeat(db: Executor, jobId: string, lease: string): Promise<boolean> {
  const result = await db
    .updateTable('jobs')
    .set({ heartbeat_at: sql<Date>`now()` })
    .where('id', '=', jobId)
    .where('lease_token', '=', lease)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export interface Progress {
  current: number;
  total: number | null;
  pageNo: number;
  cursor: string | null;
}

/**
 * Checkpoints a delivered page: the items saved and the progress and resume cursor recorded, in
 * one transaction, only while the attempt holding `lease` still owns the job (false otherwise).
 * With RESULT_STORE=s3 the page's object is written first, and deleted again when the attempt
 * turns out to have lost the job.
 */
export async function saveProgress(
  services: Resources,
  jobId: string,
  lease: string,
  progress: Progress,
  items: unknown[],
): Promise<boolean> {
  const body = await pageBody(services, jobId, progress.pageNo, items);
  const saved = await services.db.transaction().execute(async (tx) => {
    const updated = await tx
      .updateTable('jobs')
      .set({
        progress_current: progress.current,
        progress_total: progress.total,
        progress_message: `Fetched page ${progress.pageNo} (${progress.current} results)`,
        checkpoint_cursor: progress.cursor,
        checkpoint_pages: progress.pageNo,
        heartbeat_at: sql<Date>`now()`,
      })
      .where('id', '=', jobId)
      .where('lease_token', '=', lease)
      .where('status', '=', 'running')
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) return false;
    await savePage(tx, jobId, progress.pageNo, body);
    return true;
  });
  // A child's progress changes its batch's view in nothing: only the job's stream is told.
  if (saved) announce(services, [{ id: jobId, batch_id: null }]);
  else if (body.object_key) await deleteObjectsQuietly(services, [body.object_key]);
  return saved;
}

async function savePage(tx: Tx, jobId: string, pageNo: number, body: PageBody): Promise<void> {
  const values = {
    item_count: body.item_count,
    items: body.items === null ? null : JSON.stringify(body.items),
    object_key: body.object_key,
    object_offset: null,
    stored_bytes: body.stored_bytes,
  };
  await tx
    .insertInto('job_result_pages')
    .values({ job_id: jobId, page_no: pageNo, ...values })
    .onConflict((oc) => oc.columns(['job_id', 'page_no']).doUpdateSet(values))
    .execute();
}

// ---------------------------------------------------------------------------------------------
// End without billing: fail and cancel

export interface Ending {
  status: 'failed' | 'cancelled';
  /** progress_message of the ended jobs. */
  message: string;
  /** The job's error (failed), or null (cancelled). */
  error: JobError | null;
}

/**
 * The one path by which jobs end without billing: status failed or cancelled, their held
 * reservations released whole, their saved result pages discarded, their webhook events
 * written. Only jobs still queued or running end; with a `lease`, only while the attempt holding
 * it owns the (running) job. Returns the jobs ended; the caller announces them after commit
 * (announceEnded).
 */
export async function endWithoutBilling(
  tx: Tx,
  now: Date,
  jobIds: readonly string[],
  ending: Ending,
  lease: string | null = null,
): Promise<JobRow[]> {
  if (jobIds.length === 0) return [];
  let query = tx
    .updateTable('jobs')
    .set({
      status: ending.status,
      error: ending.error === null ? null : JSON.stringify(ending.error),
      cancel_requested_at: ending.status === 'cancelled' ? now : undefined,
      progress_stage: ending.status,
      progress_message: ending.message,
      finished_at: now,
      lease_token: null,
      next_attempt_at: null,
      billed_credits: 0,
      billed_units: 0,
      result_count: null,
    })
    // The rows are locked in id order, as every writer of several jobs locks them.
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('jobs')
        .select('id')
        .where('id', 'in', [...jobIds])
        .orderBy('id')
        .forUpdate(),
    );
  query =
    lease === null
      ? query.where('status', 'in', ['queued', 'running'])
      : query.where('lease_token', '=', lease).where('status', '=', 'running');
  const ended = await query.returningAll().execute();
  if (ended.length === 0) return [];
  const endedIds = ended.map((job) => job.id);
  const note = ending.status === 'failed' ? `job failed: ${ending.error?.code ?? 'unknown'}` : 'job cancelled';
  await releaseReservations(tx, now, endedIds, note);
  await tx.deleteFrom('job_result_pages').where('job_id', 'in', endedIds).execute();
  await recordEvents(tx, now, endingCandidates(ended));
  return ended;
}

/** Fails a job (with `lease`: only while that attempt owns it; without: if still queued or running). */
export async function failJob(services: Resources, jobId: string, lease: string | null, error: JobError): Promise<boolean> {
  const ended = await services.db
    .transaction()
    .execute((tx) => endWithoutBilling(tx, services.clock.now(), [jobId], { status: 'failed', message: error.message, error }, lease));
  announceEnded(services, ended, 'failed', ended.length > 0);
  return ended.length > 0;
}

/** Cancels the jobs still queued or running among `jobIds`; returns those cancelled. */
export async function cancelJobs(tx: Tx, now: Date, jobIds: readonly string[], message: string): Promise<JobRow[]> {
  return endWithoutBilling(tx, now, jobIds, { status: 'cancelled', message, error: null });
}

// ---------------------------------------------------------------------------------------------
// The process's claims, grouped

/** Claims of job attempts; `services.claims` of every process. */
export interface JobClaims {
  /** The job, running under a fresh lease for this attempt; null when it is not claimable. */
  submit(jobId: string): Promise<JobRow | null>;
}

/**
 * Group commit of the worker's claims: the claims that arrive together share one statement
 * (claimJobs). The worker's slots bound them, so they wait rather than being refused.
 */
export class GroupJobClaims extends GroupCommit<string, JobRow | null> implements JobClaims {
  constructor(resources: Resources) {
    super((ids) => claimJobs(resources, ids), { maxBatch: 64 });
  }
}
