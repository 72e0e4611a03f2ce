import type { JobRow, Tx } from '@sdx/db';
import type { Services, Tenant } from '../context';
import { sql } from 'kysely';
import { lockBalance } from '../credits/credits';
import { ApiError } from '../errors';
import { claimIdempotencyKey, pointIdempotencyKey, requestHash } from '../idempotency/idempotency';
import { newId } from '../ids';
import { admitJobs } from './admission';
import { findJob } from './queries';
import { type Recipe, type RecipeInput, requestKey, resolveRecipe } from './recipe';

export interface CreateJobInput extends RecipeInput {
  target: string;
}

export interface CreateJobOptions {
  /** Idempotency-Key header, scoped to `endpoint`. */
  idempotencyKey?: string | null;
  endpoint: string;
  /** Cache-Control: no-cache. */
  skipCache?: boolean;
  scheduleId?: string | null;
  /** POST /v1/extract: the largest effective limit served synchronously. */
  maxSyncLimit?: number;
}

export interface CreatedJob {
  job: JobRow;
  deduplicated: boolean;
  idempotentReplay: boolean;
  /** Whether a new queue entry is needed (a new queued job). */
  enqueue: boolean;
}

/**
 * POST /v1/jobs and /v1/extract: checks the request, then in one transaction claims the
 * idempotency key, reuses running work (deduplicated) or fresh results (cached), and admits a
 * new job with its credit reservation. The queue entry is added after commit; the reconciler
 * re-adds it if the process dies in between.
 */
export async function createJob(services: Services, tenant: Tenant, input: CreateJobInput, options: CreateJobOptions): Promise<CreatedJob> {
  const { recipe, normalized } = resolveRecipe(input, [{ value: input.target, loc: ['body', 'target'] }], tenant.workspace, services.gate);
  if (options.maxSyncLimit !== undefined && recipe.limit > options.maxSyncLimit) {
    throw new ApiError(
      'invalid_request',
      `POST /v1/extract serves at most ${options.maxSyncLimit} results; use POST /v1/jobs for an effective limit of ${recipe.limit}.`,
      { limit: recipe.limit, max_sync_limit: options.maxSyncLimit, use: 'POST /v1/jobs' },
    );
  }
  const target = { target: input.target.trim(), normalized: normalized[0]! };
  const now = services.clock.now();
  const jobId = newId('job');

  const created = await services.db.transaction().execute(async (tx): Promise<CreatedJob> => {
    if (options.idempotencyKey) {
      const claim = {
        workspaceId: tenant.workspace.id,
        endpoint: options.endpoint,
        key: options.idempotencyKey,
        requestHash: requestHash(input),
        resourceType: 'job' as const,
        resourceId: jobId,
        now,
      };
      const outcome = await claimIdempotencyKey(tx, claim);
      if (outcome.kind === 'replay') {
        const job = await findJob(tx, tenant, outcome.resourceId);
        if (job) return { job, deduplicated: false, idempotentReplay: true, enqueue: false };
      }
      const result = await admitOrReuse(services, tx, tenant, now, recipe, target, jobId, options);
      if (result.job.id !== jobId) await pointIdempotencyKey(tx, claim, result.job.id);
      return result;
    }
    return admitOrReuse(services, tx, tenant, now, recipe, target, jobId, options);
  });

  if (created.enqueue) await enqueueJob(services, created.job);
  return created;
}

async function admitOrReuse(
  services: Services,
  tx: Tx,
  tenant: Tenant,
  now: Date,
  recipe: Recipe,
  target: { target: string; normalized: string },
  jobId: string,
  options: CreateJobOptions,
): Promise<CreatedJob> {
  const key = requestKey(recipe, target.normalized);
  // Serialise this workspace's admissions first, so the reuse checks see a stable picture.
  const balance = await lockBalance(tx, tenant.workspace.id, now, tenant.workspace.monthly_quota);

  // One query finds work to reuse: a queued or running twin (deduplicated) first, else the
  // latest fresh completed result (cached) unless the caller skipped the cache.
  const cacheFrom = new Date(now.getTime() - services.config.cacheTtlSeconds * 1000);
  const useCache = !options.skipCache && services.config.cacheTtlSeconds > 0;
  const reusable = await tx
    .selectFrom('jobs')
    .selectAll()
    .where('workspace_id', '=', tenant.workspace.id)
    .where('request_key', '=', key)
    .where((eb) =>
      useCache
        ? eb.or([
            eb('status', 'in', ['queued', 'running']),
            eb.and([eb('status', '=', 'completed'), eb('cached', '=', false), eb('finished_at', '>', cacheFrom)]),
          ])
        : eb('status', 'in', ['queued', 'running']),
    )
    .orderBy(sql`status in ('queued', 'running')`, 'desc')
    .orderBy('finished_at', (ob) => ob.desc().nullsLast())
    .limit(1)
    .executeTakeFirst();
  if (reusable && reusable.status !== 'completed') return { job: reusable, deduplicated: true, idempotentReplay: false, enqueue: false };

  if (reusable) {
    // A fresh completed result: a new job that is already completed, billed nothing.
    const fresh = reusable;
    const job = await tx
      .insertInto('jobs')
      .values({
        id: jobId,
        workspace_id: tenant.workspace.id,
        schedule_id: options.scheduleId ?? null,
        platform: fresh.platform,
        operation: fresh.operation,
        target: target.target,
        normalized_target: target.normalized,
        request_key: key,
        requested_limit: fresh.requested_limit,
        include_posts: fresh.include_posts,
        status: 'completed',
        attempts: 0,
        max_attempts: services.config.jobMaxAttempts,
        progress_stage: 'completed',
        progress_message: `Reused the result of ${fresh.id}`,
        progress_current: fresh.result_count ?? 0,
        progress_total: fresh.result_count,
        result_count: fresh.result_count,
        billed_units: 0,
        credit_rate: fresh.credit_rate,
        results_per_credit: fresh.results_per_credit,
        base_credits: fresh.base_credits,
        reserved_credits: 0,
        billed_credits: 0,
        cached: true,
        source_job_id: fresh.id,
        created_at: now,
        started_at: now,
        finished_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { job, deduplicated: false, idempotentReplay: false, enqueue: false };
  }

  const [job] = await admitJobs(tx, tenant, now, recipe, [target], {
    maxAttempts: services.config.jobMaxAttempts,
    scheduleId: options.scheduleId,
    ids: [jobId],
    balance,
  });
  return { job: job!, deduplicated: false, idempotentReplay: false, enqueue: true };
}

export async function enqueueJob(services: Services, job: Pick<JobRow, 'id' | 'attempts' | 'batch_id'>): Promise<void> {
  try {
    await services.queues.enqueue({ jobId: job.id, attempt: job.attempts + 1, batchChild: job.batch_id !== null });
  } catch (error) {
    // The job is safely queued in Postgres; the reconciler enqueues it once Redis answers.
    services.log.warn({ err: error, jobId: job.id }, 'enqueue failed; the reconciler will retry');
  }
}
