import type { JobRow } from '@sdx/db';
import type { Services, Tenant } from '../context';
import { ApiError } from '../errors';
import { requestHash } from '../idempotency/idempotency';
import { newId } from '../ids';
import { admitSubmission, type CreatedJob } from './admit-group';
import { type RecipeInput, resolveRecipe } from './recipe';

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

/**
 * POST /v1/jobs and /v1/extract (and single-target schedule runs): checks the request (catalog,
 * target syntax, limits), then admits it with its idempotency key, deduplication, cache,
 * active-job cap and credit reservation in one transaction shared with the other submissions
 * of the moment (admitSubmission). The queue entry is added after commit; the reconciler
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
  return admitSubmission(services, {
    tenant,
    recipe,
    target: { target: input.target.trim(), normalized: normalized[0]! },
    jobId: newId('job'),
    idempotency: options.idempotencyKey
      ? { endpoint: options.endpoint, key: options.idempotencyKey, requestHash: requestHash(input) }
      : null,
    skipCache: options.skipCache ?? false,
    scheduleId: options.scheduleId ?? null,
  });
}

export async function enqueueJob(services: Services, job: Pick<JobRow, 'id' | 'attempts' | 'batch_id'>): Promise<void> {
  try {
    await services.queues.enqueue({ jobId: job.id, attempt: job.attempts + 1, batchChild: job.batch_id !== null });
  } catch (error) {
    // The job is safely queued in Postgres; the reconciler enqueues it once Redis answers.
    services.log.warn({ err: error, jobId: job.id }, 'enqueue failed; the reconciler will retry');
  }
}
