import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Executor, JobRow, NewJob, Tx } from '@sdx/db';
import { recordJobFinished } from '@sdx/metrics';
import type { EnqueueRequest } from '@sdx/queue';
import type { Services } from '../context';
import {
  type Balance,
  bookSettlements,
  balanceLock,
  type ClaimedReservation,
  claimHeldReservations,
  type PlannedReservation,
  releaseReservations,
  rollOver,
  type Settlement,
  withReservations,
} from '../credits/credits';
import { type FlushResult, refusedData } from '../group-commit';
import { canonicalJson } from '../idempotency/idempotency';
import { jsonRows, sendTogether } from '@sdx/db';
import { chargeOf, type Recipe, ratesOf } from './recipe';
import { newId } from '../ids';
import { BATCH_CHILD_ENDED, endingCandidates, insertEvents, recordEvents } from '../webhooks/events';
import type { Item } from '@sdx/providers';

/**
 * The job-state module: every transition of a job's status (api-v1.md 3) is one function here,
 * for single jobs and batch children alike.
 *
 *   queue     (new)              → queued       queueJobs
 *   claim     queued | abandoned → running      claimJobs
 *   heartbeat running            → running      heartbeat
 *   progress  running            → running      saveProgress (a checkpointed page)
 *   retry     running            → queued       retryLater; abandoned running → queued: requeueAbandoned
 *   hand back running            → queued       handBack (its worker is shutting down; the attempt is not counted)
 *   complete  running            → completed    completeJobs (billed: the reservation settled)
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
 * batch child, the check of its batch. After commit, each change is published to the live
 * streams (announce).
 */

export interface JobError {
  code: string;
  message: string;
  retryable: boolean;
  [context: string]: unknown;
}

// ---------------------------------------------------------------------------------------------
// Queue

export interface QueueOptions {
  maxAttempts: number;
  batchId?: string | null;
  batchPosition?: number | null;
  scheduleId?: string | null;
  newOnly?: boolean;
  requestId?: string | null;
  /** The deployment whose reconciler recovers the job. */
  deployment?: string | null;
  /** The priority of its queue entries (its rank among its workspace's active jobs). */
  priority?: number;
}

/** The row of a newly admitted job, status queued, its maximum cost reserved and its rates recorded. */
export function queuedJobRow(
  workspaceId: string,
  now: Date,
  recipe: Recipe,
  target: { target: string; normalized: string },
  key: string,
  id: string,
  options: QueueOptions,
): NewJob {
  return {
    id,
    workspace_id: workspaceId,
    batch_id: options.batchId ?? null,
    batch_position: options.batchPosition ?? null,
    schedule_id: options.scheduleId ?? null,
    platform: recipe.platform,
    operation: recipe.operation,
    target: target.target,
    normalized_target: target.normalized,
    request_key: key,
    requested_limit: recipe.limit,
    include_posts: recipe.includePosts,
    status: 'queued',
    max_attempts: options.maxAttempts,
    progress_stage: 'queued',
    progress_message: 'Waiting for a worker',
    progress_total: null,
    ...ratesOf(recipe),
    new_only: options.newOnly ?? false,
    request_id: options.requestId ?? null,
    reserved_credits: recipe.maxCredits,
    deployment: options.deployment ?? null,
    queue_priority: clampPriority(options.priority ?? 1),
    enqueued_at: now,
    created_at: now,
  };
}

/** Queue priorities run from 1 (first) to MAX_PRIORITY; ranks beyond share the last. */
export const MAX_PRIORITY = 2_000_000;

export function clampPriority(rank: number): number {
  return Math.max(1, Math.min(MAX_PRIORITY, Math.floor(rank)));
}

/** A new job that is already completed, reusing the fresh result of `fresh`: billed nothing. */
export function cachedJobRow(
  workspaceId: string,
  now: Date,
  fresh: JobRow,
  target: { target: string; normalized: string },
  key: string,
  id: string,
  options: { maxAttempts: number; scheduleId: string | null; requestId: string | null },
): NewJob {
  return {
    id,
    workspace_id: workspaceId,
    schedule_id: options.scheduleId,
    request_id: options.requestId,
    platform: fresh.platform,
    operation: fresh.operation,
    target: target.target,
    normalized_target: target.normalized,
    request_key: key,
    requested_limit: fresh.requested_limit,
    include_posts: fresh.include_posts,
    status: 'completed',
    attempts: 0,
    max_attempts: options.maxAttempts,
    progress_stage: 'completed',
    progress_message: `Reused the result of ${fresh.id}`,
    progress_current: fresh.result_count ?? 0,
    progress_total: fresh.result_count,
    result_count: fresh.result_count,
    billed_units: 0,
    credit_rate: fresh.credit_rate,
    results_per_credit: fresh.results_per_credit,
    base_credits: fresh.base_credits,
    bundle_credit_rate: fresh.bundle_credit_rate,
    bundle_results_per_credit: fresh.bundle_results_per_credit,
    bundle_base_credits: fresh.bundle_base_credits,
    reserved_credits: 0,
    billed_credits: 0,
    cached: true,
    source_job_id: fresh.id,
    created_at: now,
    started_at: now,
    finished_at: now,
  };
}

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
export async function claimJobs(services: Services, jobIds: readonly string[]): Promise<FlushResult<JobRow | null>> {
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
export function claimStatement(services: Services, jobIds: readonly string[]) {
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
 */
export async function saveProgress(services: Services, jobId: string, lease: string, progress: Progress, items: unknown[]): Promise<boolean> {
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
    await savePage(tx, jobId, progress.pageNo, items);
    return true;
  });
  // A child's progress changes its batch's view in nothing: only the job's stream is told.
  if (saved) announce(services, [{ id: jobId, batch_id: null }]);
  return saved;
}

async function savePage(tx: Tx, jobId: string, pageNo: number, items: unknown[]): Promise<void> {
  await tx
    .insertInto('job_result_pages')
    .values({ job_id: jobId, page_no: pageNo, item_count: items.length, items: JSON.stringify(items) })
    .onConflict((oc) => oc.columns(['job_id', 'page_no']).doUpdateSet({ item_count: items.length, items: JSON.stringify(items) }))
    .execute();
}

// ---------------------------------------------------------------------------------------------
// Retry

/**
 * Puts the job of a failed attempt back in the queue for its next attempt at `next` (its queue
 * entry delayed until then), while the attempt holding `lease` still owns it; false otherwise.
 */
export async function retryLater(services: Services, jobId: string, lease: string, next: Date, message: string): Promise<boolean> {
  const requeued = await services.db
    .updateTable('jobs')
    .set({ status: 'queued', next_attempt_at: next, lease_token: null, progress_stage: 'retrying', progress_message: message, enqueued_at: sql<Date>`now()` })
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
export async function requeueAbandoned(db: Executor, jobIds: readonly string[], staleBefore: Date): Promise<Array<Pick<JobRow, 'id' | 'attempts' | 'batch_id' | 'queue_priority'>>> {
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
export async function handBack(services: Services, jobId: string, lease: string): Promise<boolean> {
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

// ---------------------------------------------------------------------------------------------
// Complete

/** What an attempt delivered, counted by kind: for a bundle, the profile is primary and the rest bundled. */
export interface Delivered {
  total: number;
  primary: number;
  bundled: number;
  /** The last page, not yet saved: it is written with the completion. */
  finalPage: { pageNo: number; items: Item[] } | null;
}

/** An attempt that delivered its results and asks to complete the job it claimed with `lease`. */
export interface Completion {
  job: JobRow;
  lease: string;
  delivered: Delivered;
}

/**
 * Completes jobs and settles their reservations, in one transaction for all of them. Each is
 * completed only if its attempt still holds the lease on a running job; true for those, false
 * for the others (cancelled, or taken over by another attempt): then nothing is written and
 * nothing is billed. Each job is charged its price at the rates recorded on it (chargeOf).
 * Retried when Postgres picks the transaction as a deadlock victim.
 */
export async function completeJobs(services: Services, items: readonly Completion[]): Promise<FlushResult<boolean>> {
  // A new_only schedule's jobs keep only what is new before they complete: each on its own.
  if (items.some((c) => c.job.new_only)) {
    const results: FlushResult<boolean> = new Array(items.length);
    const regular = items.flatMap((c, i) => (c.job.new_only ? [] : [i]));
    if (regular.length > 0) {
      const answers = await completeJobs(services, regular.map((i) => items[i]!));
      regular.forEach((i, k) => (results[i] = answers[k]!));
    }
    for (const [i, c] of items.entries()) {
      if (!c.job.new_only) continue;
      try {
        const { done, events } = await retryDeadlocks(services, () => services.db.transaction().execute((tx) => completeNewOnly(tx, services.clock.now(), c)));
        results[i] = done;
        if (done) {
          recordJobFinished(c.job.platform, c.job.operation, 'completed');
          announce(services, [c.job], events > 0);
        }
      } catch (error) {
        results[i] = error instanceof Error ? error : new Error(String(error));
      }
    }
    return results;
  }
  try {
    return await completeTogether(services, items);
  } catch (error) {
    // Postgres refused the group's data (a result it cannot store): each job is tried alone, so
    // only the job at fault fails its attempt. Any other failure is every attempt's answer.
    if (items.length === 1 || !refusedData(error)) throw error;
    services.log.warn({ err: error, jobs: items.length }, 'group completion failed; completing its jobs one by one');
    const results: FlushResult<boolean> = [];
    for (const item of items) {
      try {
        results.push(...(await completeTogether(services, [item])));
      } catch (err) {
        results.push(err instanceof Error ? err : new Error(String(err)));
      }
    }
    return results;
  }
}

async function completeTogether(services: Services, items: readonly Completion[]): Promise<FlushResult<boolean>> {
  const { results, events } = await retryDeadlocks(services, () =>
    services.db.transaction().execute((tx) => completeInTransaction(tx, services.clock.now(), items)),
  );
  results.forEach((done, i) => {
    if (done === true) recordJobFinished(items[i]!.job.platform, items[i]!.job.operation, 'completed');
  });
  announce(services, items.filter((_, i) => results[i] === true).map((c) => c.job), events > 0);
  return results;
}

/** Runs a completion transaction again when Postgres picks it as a deadlock victim (up to 3 times). */
async function retryDeadlocks<T>(services: Services, run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if ((error as { code?: string }).code !== '40P01' || attempt >= 3) throw error;
      services.log.warn({ attempt }, 'job completion chosen as deadlock victim; retrying');
    }
  }
}

/**
 * Completes a new_only schedule's job with only the items no earlier occurrence of its schedule
 * delivered for its target (extensions.md 10): its items are claimed in the feed's delivered set
 * (delivered_items, by identity hash) in this transaction, its saved pages are cut down to the
 * items it claimed, and it is completed and billed for those alone. The job row is locked and
 * its lease checked first, so an attempt that lost the job claims nothing; a failed or
 * cancelled occurrence never gets here; and of two overlapping occurrences, the second waits on
 * the first's claims and then finds them taken.
 */
async function completeNewOnly(tx: Tx, now: Date, c: Completion): Promise<{ done: boolean; events: number }> {
  const owned = await tx
    .selectFrom('jobs')
    .select('id')
    .where('id', '=', c.job.id)
    .where('lease_token', '=', c.lease)
    .where('status', '=', 'running')
    .forUpdate()
    .executeTakeFirst();
  if (!owned) return { done: false, events: 0 };
  const saved = await tx.selectFrom('job_result_pages').select(['page_no', 'items']).where('job_id', '=', c.job.id).orderBy('page_no').execute();
  const final = c.delivered.finalPage;
  const pages = [...saved.map((p) => ({ pageNo: p.page_no, items: p.items as Item[] })), ...(final ? [{ pageNo: final.pageNo, items: final.items }] : [])];
  const hashes = pages.map((p) => p.items.map(identityHash));
  const set = await tx
    .insertInto('delivery_sets')
    .values({ schedule_id: c.job.schedule_id!, platform: c.job.platform, operation: c.job.operation, target: c.job.normalized_target })
    .onConflict((oc) => oc.columns(['schedule_id', 'platform', 'operation', 'target']).doUpdateSet({ target: c.job.normalized_target }))
    .returning('id')
    .executeTakeFirstOrThrow();
  const unique = [...new Set(hashes.flat())];
  const { rows } =
    unique.length === 0
      ? { rows: [] as Array<{ item_hash: string }> }
      : await sql<{ item_hash: string }>`
          insert into delivered_items (set_id, item_hash)
          select ${set.id}, h from unnest(${unique}::bigint[]) as h
          on conflict do nothing
          returning item_hash::text
        `.execute(tx);
  const claimed = new Set(rows.map((r) => r.item_hash));
  const kept = pages.map((p, k) =>
    p.items.filter((_, i) => {
      const hash = hashes[k]![i]!;
      if (!claimed.has(hash)) return false;
      claimed.delete(hash); // an item repeated within the job is delivered once
      return true;
    }),
  );
  const savedPages = kept.slice(0, saved.length).map((items, k) => ({ page_no: saved[k]!.page_no, item_count: items.length, items }));
  if (savedPages.length > 0) {
    await sql`
      update job_result_pages p set items = v.items, item_count = v.item_count
      from ${jsonRows(savedPages, 'page_no int, item_count int, items jsonb')} as v
      where p.job_id = ${c.job.id} and p.page_no = v.page_no
    `.execute(tx);
  }
  const total = kept.reduce((n, items) => n + items.length, 0);
  const delivered: Delivered = {
    total,
    primary: total,
    bundled: 0,
    finalPage: final ? { pageNo: final.pageNo, items: kept[kept.length - 1]! } : null,
  };
  const { results, events } = await completeInTransaction(tx, now, [{ ...c, delivered }]);
  return { done: results[0] === true, events };
}

/** An item's identity as a signed 64-bit hash (decimal text): its ID, or its content when it has none. */
function identityHash(item: Item): string {
  const id = (item as { id?: unknown }).id;
  const identity = typeof id === 'string' || typeof id === 'number' ? `id:${id}` : `content:${canonicalJson(item)}`;
  return BigInt.asIntN(64, createHash('sha256').update(identity).digest().readBigUInt64BE(0)).toString();
}

/**
 * Two statements, sent together:
 * 1. the jobs completed (job rows locked in id order first; lease and status tested on the
 *    locked rows, re-read after any lock wait), their final result pages written, and their
 *    held reservations claimed for settlement at their charge;
 * 2. the balance rows of their workspaces locked, in workspace order;
 * then the settlements booked (money module). Locks are taken jobs, then reservations, then
 * balances: the order of every other writer of them (cancellation, failure, reconciler).
 * The first statement also writes the completed jobs' webhook events (job.completed and their
 * batches' checks) where a webhook of the workspace takes them; `events` counts those written.
 */
async function completeInTransaction(tx: Tx, now: Date, items: readonly Completion[]): Promise<{ results: FlushResult<boolean>; events: number }> {
  const values = items.map(({ job, lease, delivered }, idx) => ({
    idx,
    id: job.id,
    lease,
    message: delivered.total === 0 ? 'Completed with no results' : `Completed with ${delivered.total} results`,
    total: delivered.total,
    credits: chargeOf(job, delivered.primary, delivered.bundled),
    event_id: newId('evt'),
    check_id: job.batch_id === null ? null : newId('evt'),
  }));
  const ids = [...new Set(items.map((c) => c.job.id))];
  // Pages of every item are sent; only those of jobs completed here are written.
  const pages = items.flatMap(({ job, lease, delivered: { finalPage } }) =>
    finalPage ? [{ job_id: job.id, lease, page_no: finalPage.pageNo, item_count: finalPage.items.length, items: finalPage.items }] : [],
  );
  const writePages =
    pages.length === 0
      ? sql``
      : sql`, pages as (
          insert into job_result_pages (job_id, page_no, item_count, items)
          select p.job_id, p.page_no, p.item_count, p.items
          from ${jsonRows(pages, 'job_id text, lease text, page_no int, item_count int, items jsonb')} as p
          join done d on d.id = p.job_id and d.lease = p.lease
          on conflict (job_id, page_no) do update set item_count = excluded.item_count, items = excluded.items
        )`;
  const eventInsert = insertEvents(
    sql`(
      select d.event_id as id, d.workspace_id, 'job.completed' as type, d.id as subject_id from done d
      union all
      select d.check_id, d.workspace_id, ${BATCH_CHILD_ENDED}, d.batch_id from done d where d.batch_id is not null
    )`,
    now,
  );
  const completion = sql<ClaimedReservation & { idx: number; reservation_id: string | null; events: number }>`
    with locked as materialized (
      select l.id, l.status, l.lease_token from jobs l where l.id in (${sql.join(ids)}) order by l.id for update
    ), done as (
      update jobs j
      set status = 'completed',
          progress_stage = 'completed',
          progress_message = v.message,
          progress_current = v.total,
          progress_total = v.total,
          result_count = v.total,
          billed_units = v.total,
          billed_credits = v.credits,
          finished_at = ${now},
          lease_token = null,
          checkpoint_cursor = null
      from ${jsonRows(values, 'idx int, id text, lease text, message text, total int, credits int, event_id text, check_id text')} as v, locked k
      where k.id = v.id
        and k.lease_token = v.lease
        and k.status = 'running'
        and j.id = k.id
      returning v.idx, j.id, v.lease, v.credits, j.workspace_id, j.batch_id, v.event_id, v.check_id
    )${writePages},
    settled as (${claimHeldReservations(now, sql`(select d.id as job_id, d.credits as charge from done d) as v`)}),
    events as (${eventInsert})
    select d.idx, s.id as reservation_id, s.workspace_id, s.job_id, s.plan_amount, s.promo_amount, s.purchased_amount, s.units,
           s.settled_credits, s.monthly_quota, (select count(*) from events)::int as events
    from done d left join settled s on s.job_id = d.id
    order by d.idx
  `;
  const [rows, balanceRows] = await sendTogether(tx, completion.compile(tx), balanceLock(tx, items.map(({ job }) => job.workspace_id)).compile());
  const results: boolean[] = items.map(() => false);
  const settlements: Settlement[] = [];
  for (const row of rows) {
    results[row.idx] = true;
    if (row.reservation_id !== null) settlements.push({ reservation: { ...row, id: row.reservation_id }, units: items[row.idx]!.delivered.total });
  }
  const events = rows[0]?.events ?? 0;
  if (settlements.length === 0) return { results, events };
  const quotas = [...new Map(settlements.map((s) => [s.reservation.workspace_id, s.reservation.monthly_quota]))].map(([id, monthly_quota]) => ({ id, monthly_quota }));
  await bookSettlements(tx, now, settlements, await rollOver(tx, balanceRows, quotas, now));
  return { results, events };
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
 * it owns the (running) job. Returns the jobs ended; the caller announces them after commit.
 */
export async function endWithoutBilling(tx: Tx, now: Date, jobIds: readonly string[], ending: Ending, lease: string | null = null): Promise<JobRow[]> {
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
    .where('id', 'in', (eb) => eb.selectFrom('jobs').select('id').where('id', 'in', [...jobIds]).orderBy('id').forUpdate());
  query = lease === null ? query.where('status', 'in', ['queued', 'running']) : query.where('lease_token', '=', lease).where('status', '=', 'running');
  const ended = await query.returningAll().execute();
  if (ended.length === 0) return [];
  const endedIds = ended.map((job) => job.id);
  const note = ending.status === 'failed' ? `job failed: ${ending.error?.code ?? 'unknown'}` : 'job cancelled';
  await releaseReservations(tx, now, endedIds, note);
  await tx.deleteFrom('job_result_pages').where('job_id', 'in', endedIds).execute();
  await recordEvents(tx, now, endingCandidates(ended));
  for (const job of ended) recordJobFinished(job.platform, job.operation, ending.status);
  return ended;
}

/** Fails a job (with `lease`: only while that attempt owns it; without: if still queued or running). */
export async function failJob(services: Services, jobId: string, lease: string | null, error: JobError): Promise<boolean> {
  const ended = await services.db
    .transaction()
    .execute((tx) => endWithoutBilling(tx, services.clock.now(), [jobId], { status: 'failed', message: error.message, error }, lease));
  announce(services, ended, ended.length > 0);
  return ended.length > 0;
}

/** Cancels the jobs still queued or running among `jobIds`; returns those cancelled. */
export async function cancelJobs(tx: Tx, now: Date, jobIds: readonly string[], message: string): Promise<JobRow[]> {
  return endWithoutBilling(tx, now, jobIds, { status: 'cancelled', message, error: null });
}

// ---------------------------------------------------------------------------------------------
// After commit

/**
 * Tells, after the change committed, the live streams that these jobs changed (status or
 * progress; a batch child's stream and its batch's), and this process's webhook dispatcher when
 * events were written. Never throws, never waits.
 */
export function announce(services: Services, jobs: ReadonlyArray<Pick<JobRow, 'id' | 'batch_id'>>, eventsWritten = false): void {
  if (jobs.length > 0) services.live.publish(jobs.map((job) => ({ jobId: job.id, batchId: job.batch_id })));
  if (eventsWritten) services.outbox.written();
}

// ---------------------------------------------------------------------------------------------
// Queue entries

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
export async function enqueueAfterCommit(services: Services, requests: readonly EnqueueRequest[]): Promise<boolean> {
  if (requests.length === 0) return true;
  try {
    await services.queues.enqueueMany(requests);
    return true;
  } catch (error) {
    services.log.warn({ err: error, jobs: requests.length }, 'enqueue failed; the reconciler will retry');
    await markEnqueueFailed(services, requests.map((r) => r.jobId));
    return false;
  }
}

/** Marks queued jobs whose entries could not be added, so the next reconciler pass takes them first. Never throws. */
async function markEnqueueFailed(services: Services, jobIds: readonly string[]): Promise<void> {
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
