import type { JobRow } from '@sdx/db';
import type { Services, Tenant } from '../context';
import { submissionDelivery } from '../destinations/destinations';
import { ApiError } from '../errors';
import { requestHash } from '../idempotency/idempotency';
import { newId } from '../ids';
import { type RecipeInput, resolveRecipe } from './recipe';

export interface CreateJobInput extends RecipeInput {
  target: string;
  /** A destination of the workspace the job's export is delivered to once it completes. */
  destination_id?: string | null;
}

export interface CreateJobOptions {
  /** Idempotency-Key header, scoped to `endpoint`. */
  idempotencyKey?: string | null;
  endpoint: string;
  /** Cache-Control: no-cache. */
  skipCache?: boolean;
  scheduleId?: string | null;
  /** The X-Request-ID of the request (a schedule run's ID for an occurrence), recorded on the jobs. */
  requestId?: string | null;
  /** A new_only schedule's occurrence: delivers only items the schedule has not delivered yet. */
  newOnly?: boolean;
  /** POST /v1/extract: the largest effective limit served synchronously. */
  maxSyncLimit?: number;
}

export interface CreatedJob {
  job: JobRow;
  deduplicated: boolean;
  idempotentReplay: boolean;
  /** Whether the job is new and queued: its queue entry is being added. */
  enqueue: boolean;
}

/**
 * POST /v1/jobs and /v1/extract (and single-target schedule runs): checks the request (catalog,
 * target syntax, limits), then admits it (idempotency, deduplication, cache, active-job cap and
 * credit reservation; see the admission planner). The queue entry is added after commit; the
 * reconciler re-adds it if the process dies in between.
 */
export async function createJob(services: Services, tenant: Tenant, input: CreateJobInput, options: CreateJobOptions): Promise<CreatedJob> {
  const { recipe, normalized, keys } = resolveRecipe(
    input,
    [{ value: input.target, loc: ['body', 'target'] }],
    tenant.workspace,
    services.gate,
    options.newOnly ? `new_only:${options.scheduleId ?? null}` : null,
  );
  if (options.maxSyncLimit !== undefined && recipe.limit > options.maxSyncLimit) {
    throw new ApiError(
      'invalid_request',
      `POST /v1/extract serves at most ${options.maxSyncLimit} results; use POST /v1/jobs for an effective limit of ${recipe.limit}.`,
      { limit: recipe.limit, max_sync_limit: options.maxSyncLimit, use: 'POST /v1/jobs' },
    );
  }
  const jobId = newId('job');
  const delivery = await submissionDelivery(services.db, tenant, input.destination_id, jobId);
  const admitted = await services.admissions.admit({
    tenant,
    recipe,
    targets: [{ target: input.target.trim(), normalized: normalized[0], key: keys[0] }],
    jobIds: [jobId],
    batchId: null,
    idempotency: options.idempotencyKey
      ? { endpoint: options.endpoint, key: options.idempotencyKey, requestHash: requestHash(input) }
      : null,
    skipCache: options.skipCache ?? false,
    scheduleId: options.scheduleId ?? null,
    newOnly: options.newOnly ?? false,
    requestId: options.requestId ?? null,
    delivery,
  });
  if (admitted.kind !== 'job') throw new Error('a job submission was answered with a batch');
  const { job, deduplicated, idempotentReplay } = admitted;
  return { job, deduplicated, idempotentReplay, enqueue: !deduplicated && !idempotentReplay && job.status === 'queued' };
}
