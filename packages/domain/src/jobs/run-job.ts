import { sql } from 'kysely';
import { findOperation, type Platform } from '@sdx/catalog';
import type { JobRow } from '@sdx/db';
import { type Item, type Provider, ProviderError } from '@sdx/providers';
import type { Services } from '../context';
import { releaseReservation } from '../credits/credits';
import { type FlushResult, GroupCommit, perProcess } from '../group-commit';
import { completeJob, type Delivered } from './complete-jobs';
import { savePage } from './results';
import { enqueueJob } from './create-job';

export interface ProviderLookup {
  resolve(platform: string, operation: string): Provider | undefined;
}

export interface JobError {
  code: string;
  message: string;
  retryable: boolean;
  [context: string]: unknown;
}

export type RunOutcome = 'completed' | 'failed' | 'retrying' | 'discarded' | 'skipped';

/**
 * Runs one attempt of one job. The attempt first claims the job (queued, or running with a dead
 * heartbeat) with a fresh lease token; every later write requires that token and status
 * running, so a stale or duplicate delivery, a cancelled job or a second worker can never
 * deliver, bill or fail it twice. Settlement happens in the same transaction as completion.
 * Claims and completions of the attempts running at once in this process are grouped (see
 * claimJob and completeJob): one statement claims a group, one transaction completes one.
 */
export interface AttemptOptions {
  /**
   * Called once the extraction has delivered and the completion is handed to the completion
   * group: from then on the attempt only waits for that commit (its heartbeat goes on until it).
   */
  onDelivered?: () => void;
}

export async function runJobAttempt(services: Services, providers: ProviderLookup, jobId: string, options: AttemptOptions = {}): Promise<RunOutcome> {
  const { db, config, log } = services;
  const job = await claimJob(services, jobId);
  if (!job) return 'skipped';
  const lease = job.lease_token!;
  if (job.attempts > job.max_attempts) {
    await failJob(services, job, lease, { code: 'retries_exhausted', message: 'No attempts left.', retryable: false });
    return 'failed';
  }

  const controller = new AbortController();
  const heartbeat = setInterval(() => {
    db.updateTable('jobs')
      .set({ heartbeat_at: sql<Date>`now()` })
      .where('id', '=', job.id)
      .where('lease_token', '=', lease)
      .where('status', '=', 'running')
      .executeTakeFirst()
      .then((r) => {
        if (Number(r.numUpdatedRows) === 0) controller.abort(new Error('job no longer owned by this attempt'));
      })
      .catch((err) => log.warn({ err, jobId: job.id }, 'heartbeat failed'));
  }, config.heartbeatIntervalMs);
  heartbeat.unref();

  try {
    const delivered = await extractPages(services, providers, job, lease, controller.signal);
    if (delivered === null) return 'discarded';
    const completed = completeJob(services, { job, lease, delivered });
    options.onDelivered?.();
    return (await completed) ? 'completed' : 'discarded';
  } catch (error) {
    if (controller.signal.aborted) return 'discarded';
    return handleFailure(services, job, lease, error);
  } finally {
    clearInterval(heartbeat);
  }
}

const claims = new WeakMap<Services, GroupCommit<string, JobRow | null>>();

/**
 * Claims a job for one attempt: the job row, running under a fresh lease token, or null when the
 * job is not claimable (already running and alive, terminal, or not yet due). The attempts
 * starting at once in this process are claimed by one statement (see GroupCommit).
 */
export async function claimJob(services: Services, jobId: string): Promise<JobRow | null> {
  const group = perProcess(claims, services, () => new GroupCommit((ids: string[]) => claimJobs(services, ids), { maxBatch: 64 }));
  return group.submit(jobId);
}

/**
 * One claim statement for a group of attempts. Each claimed row gets its own lease. The rows are
 * locked in id order first, so the claims of several worker processes racing over the same
 * jobs (duplicate queue entries) cannot deadlock. When one job appears twice in the group (two
 * deliveries of it in this process), the first delivery gets it and the other is skipped, as
 * the second of two consecutive claims would be.
 *
 * The claimable test is computed in the locking CTE's select list, not in a WHERE clause: after
 * a lock wait, Postgres re-evaluates the locked row's latest version (EvalPlanQual), so a job
 * claimed meanwhile by another worker reads as not claimable. Kept out of every WHERE clause, it
 * also cannot steer the planner to the partial status indexes: with fresh or stale statistics
 * those look tiny, and a bitmap scan of every active job replaced the few primary-key lookups
 * (5 ms instead of 0.8 ms per claim with 3,000 jobs queued).
 */
export async function claimJobs(services: Services, jobIds: readonly string[]): Promise<FlushResult<JobRow | null>> {
  const { rows } = await claimStatement(services, jobIds).execute(services.db);
  const claimed = new Map(rows.map((row) => [row.id, row]));
  return jobIds.map((id) => {
    const row = claimed.get(id);
    if (!row) return null;
    claimed.delete(id);
    return row;
  });
}

/**
 * The claim statement of claimJobs, built and not run. Queued and due, or running with a dead
 * heartbeat and an attempt left, is claimable. Written as one SQL text: the worker runs it for
 * every group, and a fixed text costs no query building.
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

/** Streams the provider's pages into job_result_pages, checkpointing each. Null when the attempt lost the job. */
async function extractPages(services: Services, providers: ProviderLookup, job: JobRow, lease: string, signal: AbortSignal): Promise<Delivered | null> {
  const spec = findOperation(job.platform, job.operation);
  const provider = providers.resolve(job.platform, job.operation);
  if (!spec || !provider) {
    throw new ProviderError('internal_error', `No provider serves ${job.platform} ${job.operation}.`, false);
  }
  const bundle = job.include_posts > 0;
  const cap = job.requested_limit + (bundle ? job.include_posts : 0);
  let total = job.progress_current;
  let pageNo = job.checkpoint_pages;
  let firstKind: string | undefined;
  let finalPage: { pageNo: number; items: Item[] } | null = null;
  const request = {
    platform: job.platform as Platform,
    operation: job.operation,
    spec,
    target: job.normalized_target,
    limit: job.requested_limit,
    includePosts: job.include_posts,
    attempt: job.attempts,
    resumeCursor: job.checkpoint_cursor,
    signal,
  };
  if (pageNo > 0 && job.checkpoint_cursor === null) {
    // Every page was saved by an earlier attempt; only completion is left.
  } else {
    for await (const page of provider.extract(request)) {
      if (signal.aborted) return null;
      const items: Item[] = page.items.slice(0, Math.max(0, cap - total));
      pageNo += 1;
      if (firstKind === undefined && items.length > 0) firstKind = items[0]!.kind;
      if (total + items.length >= cap || page.cursor === null) {
        // The last page is saved in the completion transaction: one commit fewer per job.
        finalPage = { pageNo, items };
        total += items.length;
        break;
      }
      const owned = await services.db.transaction().execute(async (tx) => {
        const updated = await tx
          .updateTable('jobs')
          .set({
            progress_current: total + items.length,
            progress_total: page.total ?? null,
            progress_message: `Fetched page ${pageNo} (${total + items.length} results)`,
            checkpoint_cursor: page.cursor,
            checkpoint_pages: pageNo,
            heartbeat_at: sql<Date>`now()`,
          })
          .where('id', '=', job.id)
          .where('lease_token', '=', lease)
          .where('status', '=', 'running')
          .executeTakeFirst();
        if (Number(updated.numUpdatedRows) === 0) return false;
        await savePage(tx, job.id, pageNo, items);
        return true;
      });
      if (!owned) return null;
      total += items.length;
    }
  }
  // Count what was delivered by kind: for a bundle, the profile is primary and the rest bundled.
  if (!bundle) return { total, primary: total, bundled: 0, finalPage };
  if (job.checkpoint_pages > 0) {
    // Resumed: the first page was saved by an earlier attempt.
    const first = await services.db
      .selectFrom('job_result_pages')
      .select(sql<string | null>`items->0->>'kind'`.as('kind'))
      .where('job_id', '=', job.id)
      .where('item_count', '>', 0)
      .orderBy('page_no')
      .limit(1)
      .executeTakeFirst();
    firstKind = first?.kind ?? firstKind;
  }
  const primary = firstKind === 'profile' ? 1 : 0;
  return { total, primary, bundled: total - primary, finalPage };
}

function toJobError(error: unknown): { error: JobError; retryable: boolean; retryAfterMs: number | null } {
  if (error instanceof ProviderError) {
    return {
      error: { ...error.context, code: error.code, message: error.message, retryable: error.retryable },
      retryable: error.retryable,
      retryAfterMs: error.retryAfterMs,
    };
  }
  return {
    error: { code: 'internal_error', message: 'The extraction failed unexpectedly.', retryable: true },
    retryable: true,
    retryAfterMs: null,
  };
}

/** Exponential backoff with full jitter on top of the base: base * 2^(attempt-1) + random(0, base). */
export function retryDelayMs(baseMs: number, attempt: number, retryAfterMs: number | null): number {
  const backoff = baseMs * 2 ** Math.max(0, attempt - 1) + Math.random() * baseMs;
  return Math.max(backoff, retryAfterMs ?? 0);
}

async function handleFailure(services: Services, job: JobRow, lease: string, error: unknown): Promise<RunOutcome> {
  const { error: jobError, retryable, retryAfterMs } = toJobError(error);
  if (!(error instanceof ProviderError)) services.log.error({ err: error, jobId: job.id }, 'extraction attempt crashed');
  if (!retryable) {
    await failJob(services, job, lease, jobError);
    return 'failed';
  }
  if (job.attempts >= job.max_attempts) {
    await failJob(services, job, lease, {
      code: 'retries_exhausted',
      message: `Gave up after ${job.attempts} attempts: ${jobError.message}`,
      retryable: false,
      last_error: jobError,
    });
    return 'failed';
  }
  const delay = retryDelayMs(services.config.jobRetryBaseMs, job.attempts, retryAfterMs);
  const next = new Date(services.clock.now().getTime() + delay);
  const requeued = await services.db
    .updateTable('jobs')
    .set({
      status: 'queued',
      next_attempt_at: next,
      lease_token: null,
      progress_stage: 'retrying',
      progress_message: `Attempt ${job.attempts} failed (${jobError.code}); retrying at ${next.toISOString()}`,
    })
    .where('id', '=', job.id)
    .where('lease_token', '=', lease)
    .where('status', '=', 'running')
    .returning(['id', 'attempts', 'batch_id'])
    .executeTakeFirst();
  if (!requeued) return 'discarded';
  try {
    await services.queues.enqueue({ jobId: job.id, attempt: requeued.attempts + 1, batchChild: requeued.batch_id !== null, delayMs: delay });
  } catch (err) {
    services.log.warn({ err, jobId: job.id }, 'could not enqueue the retry; the reconciler will');
  }
  return 'retrying';
}

export async function failJob(services: Services, job: Pick<JobRow, 'id'>, lease: string | null, error: JobError): Promise<boolean> {
  const now = services.clock.now();
  return services.db.transaction().execute(async (tx) => {
    let query = tx
      .updateTable('jobs')
      .set({
        status: 'failed',
        error: JSON.stringify(error),
        progress_stage: 'failed',
        progress_message: error.message,
        finished_at: now,
        lease_token: null,
        next_attempt_at: null,
        billed_credits: 0,
        billed_units: 0,
        result_count: null,
      })
      .where('id', '=', job.id);
    query = lease === null ? query.where('status', 'in', ['queued', 'running']) : query.where('lease_token', '=', lease).where('status', '=', 'running');
    const failed = await query.returning('id').executeTakeFirst();
    if (!failed) return false;
    await releaseReservation(tx, now, job.id, `job failed: ${error.code}`);
    await tx.deleteFrom('job_result_pages').where('job_id', '=', job.id).execute();
    return true;
  });
}

export { enqueueJob };
