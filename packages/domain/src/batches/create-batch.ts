import type { BatchRow, JobRow } from '@sdx/db';
import type { Services, Tenant } from '../context';
import { submissionDelivery } from '../destinations/destinations';
import { ApiError } from '../errors';
import { requestHash } from '../idempotency/idempotency';
import { newId } from '../ids';
import { type RecipeInput, resolveRecipe } from '../jobs/recipe';

export interface CreateBatchInput extends RecipeInput {
  targets: string[];
  /** A destination of the workspace the batch's export is delivered to once it ends. */
  destination_id?: string | null;
}

export interface CreateBatchOptions {
  /** Idempotency-Key header, scoped to `endpoint`. */
  idempotencyKey?: string | null;
  endpoint: string;
  /** Set when a schedule dispatches the batch. */
  scheduleId?: string | null;
  /** The X-Request-ID of the request (a schedule run's ID for an occurrence), recorded on the jobs. */
  requestId?: string | null;
  /** A new_only schedule's occurrence: each child delivers only items not delivered yet. */
  newOnly?: boolean;
}

export interface CreatedBatch {
  batch: BatchRow;
  /** Children in target order. */
  jobs: JobRow[];
  idempotentReplay: boolean;
}

/**
 * Trims the targets and rejects duplicates compared case-insensitively (422
 * duplicate_batch_target naming each duplicated target once, as first written). Order is kept.
 */
export function uniqueTargets(targets: string[]): string[] {
  const trimmed = targets.map((t) => t.trim());
  const seen = new Map<string, string>();
  const duplicates = new Map<string, string>();
  for (const target of trimmed) {
    const key = target.toLowerCase();
    const first = seen.get(key);
    if (first === undefined) seen.set(key, target);
    else if (!duplicates.has(key)) duplicates.set(key, first);
  }
  if (duplicates.size > 0) {
    const list = [...duplicates.values()];
    throw new ApiError(
      'duplicate_batch_target',
      `Batch targets must be unique (trimmed, case-insensitive); duplicated: ${list.join(', ')}.`,
      {
        duplicates: list,
      },
    );
  }
  return trimmed;
}

/**
 * After each target is read as the service reads it (resolveRecipe's `normalized`): two targets
 * that name the same thing (`nasa` and `https://www.instagram.com/nasa/`) are duplicates too,
 * refused as duplicate_batch_target naming the first written of each, so that one target is
 * never extracted, nor billed, twice in a batch.
 */
export function uniqueNormalizedTargets(targets: string[], normalized: string[]): void {
  const seen = new Map<string, string>();
  const duplicates = new Map<string, { first: string; again: string }>();
  targets.forEach((target, i) => {
    const key = (normalized[i] ?? target).toLowerCase();
    const first = seen.get(key);
    if (first === undefined) seen.set(key, target);
    else if (!duplicates.has(key)) duplicates.set(key, { first, again: target });
  });
  if (duplicates.size > 0) {
    const pairs = [...duplicates.values()];
    throw new ApiError(
      'duplicate_batch_target',
      `Batch targets must be unique; these name the same target: ${pairs.map(({ first, again }) => `${first} and ${again}`).join('; ')}. Keep one of each.`,
      { duplicates: pairs.map(({ first }) => first) },
    );
  }
}

/**
 * POST /v1/batches (and batch occurrences of schedules). Checks, in order: duplicates, catalog,
 * each target's syntax (loc ["body", "targets", i]), limits; then admits the batch and every
 * child as one submission (see the admission planner): its idempotency key, the active-job cap
 * and the credit reservations, all or nothing (an unaffordable batch creates nothing). After
 * commit the children are enqueued with deterministic entry IDs; if the process dies before
 * that, the reconciler enqueues the queued children it finds. Batch children are never
 * deduplicated or served from the cache: each target is fresh work.
 */
export async function createBatch(
  services: Services,
  tenant: Tenant,
  input: CreateBatchInput,
  options: CreateBatchOptions,
): Promise<CreatedBatch> {
  const targets = uniqueTargets(input.targets);
  const { recipe, normalized, keys } = resolveRecipe(
    input,
    targets.map((value, i) => ({ value, loc: ['body', 'targets', i] })),
    tenant.workspace,
    services.gate,
    options.newOnly ? `new_only:${options.scheduleId ?? null}` : null,
  );
  uniqueNormalizedTargets(targets, normalized);
  const batchId = newId('bat');
  const delivery = await submissionDelivery(services.db, tenant, input.destination_id, batchId);
  const admitted = await services.admissions.admit({
    tenant,
    recipe,
    targets: targets.map((target, i) => ({ target, normalized: normalized[i], key: keys[i] })),
    jobIds: targets.map(() => newId('job')),
    batchId,
    idempotency: options.idempotencyKey
      ? { endpoint: options.endpoint, key: options.idempotencyKey, requestHash: requestHash(input) }
      : null,
    skipCache: false,
    scheduleId: options.scheduleId ?? null,
    newOnly: options.newOnly ?? false,
    requestId: options.requestId ?? null,
    delivery,
  });
  if (admitted.kind !== 'batch') throw new Error('a batch submission was answered with a job');
  return { batch: admitted.batch, jobs: admitted.jobs, idempotentReplay: admitted.idempotentReplay };
}
