import { findOperation, providerTarget, type Platform } from '@sdx/catalog';
import type { JobRow } from '@sdx/db';
import { type Item, type Provider, ProviderError } from '@sdx/providers';
import { observeJobQueueWait, observeJobRun } from '@sdx/metrics';
import type { Services } from '../context';
import { extractRecorded } from './attempt-sources';
import type { Delivered } from './complete';
import { StoreUnavailable } from '@sdx/storage';
import { firstSavedKind } from './result-pages';
import { handBack, retryLater } from './requeue';
import { failJob, heartbeat, type JobError, saveProgress } from './state';

export interface ProviderLookup {
  resolve(platform: string, operation: string): Provider | undefined;
}

export type RunOutcome = 'completed' | 'failed' | 'retrying' | 'discarded' | 'skipped' | 'handed back';

export interface AttemptOptions {
  /**
   * Called once the extraction has delivered and the completion is handed to the completion
   * group: from then on the attempt only waits for that commit (its heartbeat goes on until it).
   */
  onDelivered?: () => void;
  /**
   * Aborted when the process is shutting down and the attempt cannot finish: while it is still
   * extracting, it stops and hands the job back to the queue (handBack) for another worker.
   */
  shutdown?: AbortSignal;
}

const SHUTDOWN = Symbol('shutdown');

/** `work`, or SHUTDOWN as soon as `signal` aborts (at once if it already has). */
function unlessShutdown<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T | typeof SHUTDOWN> {
  if (!signal) return work;
  if (signal.aborted) return Promise.resolve(SHUTDOWN);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(SHUTDOWN);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * Runs one attempt of one job, as the worker's handler does for each job a queue entry wakes:
 * claim (a fresh lease), heartbeat while extracting, a checkpoint per page, then completion
 * with settlement, a retry, or a failure; every transition is the job-state module's
 * (state.ts). Claims and completions go through the process's batchers, so the attempts
 * running at once in this process share their statements.
 */
export async function runJobAttempt(
  services: Services,
  providers: ProviderLookup,
  jobId: string,
  options: AttemptOptions = {},
): Promise<RunOutcome> {
  const job = await services.claims.submit(jobId);
  if (!job) return 'skipped';
  // Every line this attempt logs names the job and the request that admitted it.
  const log = services.log.child({ jobId: job.id, requestId: job.request_id, attempt: job.attempts });
  const attempt = { ...services, log };
  const startedAt = performance.now();
  if (job.attempts === 1 && job.started_at) observeJobQueueWait(job.platform, (job.started_at.getTime() - job.created_at.getTime()) / 1000);
  const outcome = await runClaimed(attempt, providers, job, options);
  observeJobRun(job.platform, (performance.now() - startedAt) / 1000);
  log.debug({ outcome }, 'attempt finished');
  return outcome;
}

async function runClaimed(services: Services, providers: ProviderLookup, job: JobRow, options: AttemptOptions): Promise<RunOutcome> {
  const { db, config, log } = services;
  const lease = job.lease_token!;
  if (job.attempts > job.max_attempts) {
    await failJob(services, job.id, lease, { code: 'retries_exhausted', message: 'No attempts left.', retryable: false });
    return 'failed';
  }

  const controller = new AbortController();
  const beat = setInterval(() => {
    heartbeat(db, job.id, lease)
      .then((owned) => {
        if (!owned) controller.abort(new Error('job no longer owned by this attempt'));
      })
      .catch((err) => log.warn({ err }, 'heartbeat failed'));
  }, config.heartbeatIntervalMs);
  beat.unref();

  try {
    const extraction = extractPages(services, providers, job, lease, controller.signal);
    const delivered = await unlessShutdown(extraction, options.shutdown);
    if (delivered === SHUTDOWN) {
      // The job goes back first; the extraction, told to stop, can no longer write (its lease is gone).
      const handedBack = await handBack(services, job.id, lease);
      controller.abort(new Error('the worker is shutting down'));
      extraction.catch(() => undefined);
      return handedBack ? 'handed back' : 'discarded';
    }
    if (delivered === null) return 'discarded';
    const completed = services.completions.submit({ job, lease, delivered });
    options.onDelivered?.();
    return (await completed) ? 'completed' : 'discarded';
  } catch (error) {
    if (controller.signal.aborted) return 'discarded';
    return handleFailure(services, job, lease, error);
  } finally {
    clearInterval(beat);
  }
}

/** Streams the provider's pages into job_result_pages, checkpointing each. Null when the attempt lost the job. */
async function extractPages(
  services: Services,
  providers: ProviderLookup,
  job: JobRow,
  lease: string,
  signal: AbortSignal,
): Promise<Delivered | null> {
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
  let finalPage: Delivered['finalPage'] = null;
  const request = {
    platform: job.platform as Platform,
    operation: job.operation,
    spec,
    // A query goes as the user wrote it; the normalized form is only the cache and dedup key.
    target: providerTarget(spec.target, job.target, job.normalized_target),
    limit: job.requested_limit,
    includePosts: job.include_posts,
    attempt: job.attempts,
    resumeCursor: job.checkpoint_cursor,
    signal,
  };
  if (pageNo > 0 && job.checkpoint_cursor === null) {
    // Every page was saved by an earlier attempt; only completion is left.
  } else {
    for await (const page of extractRecorded(services, job, provider, request)) {
      if (signal.aborted) return null;
      const items: Item[] = page.items.slice(0, Math.max(0, cap - total));
      pageNo += 1;
      if (firstKind === undefined && items.length > 0) firstKind = items[0].kind;
      if (total + items.length >= cap || page.cursor === null) {
        // The last page is saved in the completion transaction: one commit fewer per job (with
        // RESULT_STORE=s3, in one object with the last pages of the jobs completed with it).
        finalPage = { pageNo, items };
        total += items.length;
        break;
      }
      const owned = await saveProgress(
        services,
        job.id,
        lease,
        { current: total + items.length, total: page.total ?? null, pageNo, cursor: page.cursor },
        items,
      );
      if (!owned) return null;
      total += items.length;
    }
  }
  // Count what was delivered by kind: for a bundle, the profile is primary and the rest bundled.
  if (!bundle) return { total, primary: total, bundled: 0, finalPage };
  if (job.checkpoint_pages > 0) {
    // Resumed: the first page was saved by an earlier attempt.
    firstKind = (await firstSavedKind(services, job.id)) ?? firstKind;
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
  if (error instanceof StoreUnavailable) {
    // The service's own result store failed, not the job: it waits for the store, its attempt given back.
    services.log.warn({ err: error.message }, 'result store unavailable; the attempt will be retried');
    const next = new Date(services.clock.now().getTime() + retryDelayMs(services.config.jobRetryBaseMs, 1, null));
    const message = `Waiting for the result store; retrying at ${next.toISOString()}`;
    return (await retryLater(services, job.id, lease, next, message, { counted: false })) ? 'retrying' : 'discarded';
  }
  const { error: jobError, retryable, retryAfterMs } = toJobError(error);
  if (!(error instanceof ProviderError)) services.log.error({ err: error }, 'extraction attempt crashed');
  if (!retryable) {
    await failJob(services, job.id, lease, jobError);
    return 'failed';
  }
  if (job.attempts >= job.max_attempts) {
    await failJob(services, job.id, lease, {
      code: 'retries_exhausted',
      message: `Gave up after ${job.attempts} attempts: ${jobError.message}`,
      retryable: false,
      last_error: jobError,
    });
    return 'failed';
  }
  const delay = retryDelayMs(services.config.jobRetryBaseMs, job.attempts, retryAfterMs);
  const next = new Date(services.clock.now().getTime() + delay);
  const message = `Attempt ${job.attempts} failed (${jobError.code}); retrying at ${next.toISOString()}`;
  return (await retryLater(services, job.id, lease, next, message)) ? 'retrying' : 'discarded';
}
