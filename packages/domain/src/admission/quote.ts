import type { QuoteResponse } from '@sdx/contract';
import type { Services, Tenant } from '../context';
import { availableOf } from '../credits/balances';
import { RequestValidationError } from '../errors';
import { uniqueNormalizedTargets, uniqueTargets } from '../batches/create-batch';
import { type RecipeInput, resolveRecipe } from '../jobs/recipe';
import { readAdmissionState } from './read-state';
import { planAdmission, type Submission } from './plan';

/** The body of POST /v1/quotes: a job body (`target`) or a batch body (`targets`). */
export interface QuoteInput extends RecipeInput {
  target?: string;
  targets?: string[];
}

/** What the matching create call would reserve now (extensions.md 8; QuoteResponse of openapi.yaml). */
export type Quote = QuoteResponse;

/**
 * POST /v1/quotes: the same checks as POST /v1/jobs or /v1/batches (catalog, targets, limits,
 * duplicates), then the admission planner itself on the state the admission would read, without
 * locking, reserving or writing anything. So a quote cannot drift from what admission reserves:
 * cache hits and deduplicated work cost 0, a batch is all or nothing, and a submission the
 * admission would refuse with 402 (credits, a spend cap) or 429 (the active-job cap) is
 * `affordable: false` at its full cost, `blocked_by` naming the error it would get.
 */
export async function quote(services: Services, tenant: Tenant, input: QuoteInput, options: { skipCache?: boolean } = {}): Promise<Quote> {
  const single = input.target !== undefined;
  if (single === (input.targets !== undefined)) {
    throw new RequestValidationError([
      single
        ? { loc: ['body', 'targets'], msg: 'Give either target or targets, not both', type: 'extra_forbidden', input: input.targets }
        : { loc: ['body', 'target'], msg: 'Field required: target (a job) or targets (a batch)', type: 'missing' },
    ]);
  }
  const targets = single ? [input.target!.trim()] : uniqueTargets(input.targets!);
  const { recipe, normalized, keys } = resolveRecipe(
    input,
    targets.map((value, i) => ({ value, loc: single ? ['body', 'target'] : ['body', 'targets', i] })),
    tenant.workspace,
    services.gate,
  );
  if (!single) uniqueNormalizedTargets(targets, normalized);
  const submission: Submission = {
    tenant,
    recipe,
    targets: targets.map((target, i) => ({ target, normalized: normalized[i], key: keys[i] })),
    jobIds: targets.map((_, i) => `quote_${i}`),
    batchId: single ? null : 'quote',
    idempotency: null,
    skipCache: options.skipCache ?? false,
    scheduleId: null,
    newOnly: false,
    requestId: null,
  };
  const now = services.clock.now();
  const state = await readAdmissionState(services, services.db, [submission], [{ kind: 'none' }], now, 'peek');
  const [decision] = planAdmission([submission], state, now, {
    maxAttempts: services.config.jobMaxAttempts,
    useCache: services.config.cacheTtlSeconds > 0,
  }).decisions;
  const workspace = tenant.workspace;
  const balance = state.balances.get(workspace.id)!;
  const full = recipe.maxCredits * targets.length;
  const outcome = decision;
  return {
    platform: recipe.platform,
    operation: recipe.operation,
    requested_limit: recipe.limit,
    target_count: targets.length,
    max_credits: outcome.kind === 'admitted' ? outcome.reserved : outcome.kind === 'refused' ? full : 0,
    cached_targets: outcome.kind === 'cached' ? 1 : 0,
    available_credits: availableOf(balance, workspace, now).total,
    affordable: outcome.kind !== 'refused',
    blocked_by: outcome.kind === 'refused' ? (outcome.error.code as NonNullable<Quote['blocked_by']>) : null,
    active_jobs: state.active.get(workspace.id) ?? 0,
    max_active_jobs: workspace.max_active_jobs,
  };
}
