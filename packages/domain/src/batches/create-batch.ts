import type { BatchRow, JobRow } from '@sdx/db';
import type { Services, Tenant } from '../context';
import { ApiError } from '../errors';
import { claimIdempotencyKey, requestHash } from '../idempotency/idempotency';
import { newId } from '../ids';
import { admitJobs } from '../jobs/admission';
import { type RecipeInput, resolveRecipe } from '../jobs/recipe';
import { findBatch } from './queries';

export interface CreateBatchInput extends RecipeInput {
  targets: string[];
}

export interface CreateBatchOptions {
  /** Idempotency-Key header, scoped to `endpoint`. */
  idempotencyKey?: string | null;
  endpoint: string;
  /** Set when a schedule dispatches the batch. */
  scheduleId?: string | null;
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
    throw new ApiError('duplicate_batch_target', `Batch targets must be unique (trimmed, case-insensitive); duplicated: ${list.join(', ')}.`, {
      duplicates: list,
    });
  }
  return trimmed;
}

/**
 * POST /v1/batches (and batch occurrences of schedules). Checks, in order: duplicates, catalog,
 * each target's syntax (loc ["body", "targets", i]), limits; then, in one transaction, claims
 * the idempotency key, inserts the batch and admits every child (active-job cap and credit
 * reservation, all or nothing: an unaffordable batch creates nothing). After commit the
 * children are enqueued in one bulk add with deterministic entry IDs; if the process dies
 * before that, the reconciler enqueues the queued children it finds. Batch children are never
 * deduplicated or served from the cache: each target is fresh work.
 */
export async function createBatch(services: Services, tenant: Tenant, input: CreateBatchInput, options: CreateBatchOptions): Promise<CreatedBatch> {
  const targets = uniqueTargets(input.targets);
  const { recipe, normalized } = resolveRecipe(
    input,
    targets.map((value, i) => ({ value, loc: ['body', 'targets', i] })),
    tenant.workspace,
    services.gate,
  );
  const now = services.clock.now();
  const batchId = newId('bat');

  const created = await services.db.transaction().execute(async (tx): Promise<CreatedBatch> => {
    if (options.idempotencyKey) {
      const outcome = await claimIdempotencyKey(tx, {
        workspaceId: tenant.workspace.id,
        endpoint: options.endpoint,
        key: options.idempotencyKey,
        requestHash: requestHash(input),
        resourceType: 'batch',
        resourceId: batchId,
        now,
      });
      if (outcome.kind === 'replay') {
        const batch = await findBatch(tx, tenant, outcome.resourceId);
        if (batch) {
          const jobs = await tx
            .selectFrom('jobs')
            .selectAll()
            .where('workspace_id', '=', tenant.workspace.id)
            .where('batch_id', '=', batch.id)
            .orderBy('batch_position')
            .execute();
          return { batch, jobs, idempotentReplay: true };
        }
      }
    }
    const batch = await tx
      .insertInto('batches')
      .values({
        id: batchId,
        workspace_id: tenant.workspace.id,
        platform: recipe.platform,
        operation: recipe.operation,
        requested_limit: recipe.limit,
        include_posts: recipe.includePosts,
        target_count: targets.length,
        schedule_id: options.scheduleId ?? null,
        created_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const jobs = await admitJobs(
      tx,
      tenant,
      now,
      recipe,
      targets.map((target, i) => ({ target, normalized: normalized[i]! })),
      { maxAttempts: services.config.jobMaxAttempts, batchId, scheduleId: options.scheduleId ?? null },
    );
    jobs.sort((a, b) => (a.batch_position ?? 0) - (b.batch_position ?? 0));
    return { batch, jobs, idempotentReplay: false };
  });

  if (!created.idempotentReplay) await enqueueChildren(services, created.jobs);
  return created;
}

/** Adds one queue entry per child (entry ID `${jobId}-a1`, so adding twice is a no-op). */
export async function enqueueChildren(services: Services, jobs: Array<Pick<JobRow, 'id' | 'attempts'>>): Promise<void> {
  if (jobs.length === 0) return;
  try {
    await services.queues.enqueueMany(jobs.map((job) => ({ jobId: job.id, attempt: job.attempts + 1, batchChild: true })));
  } catch (error) {
    // The children are safely queued in Postgres; the reconciler enqueues them once Redis answers.
    services.log.warn({ err: error, jobs: jobs.length }, 'batch enqueue failed; the reconciler will retry');
  }
}
