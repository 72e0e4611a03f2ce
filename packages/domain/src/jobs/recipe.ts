import {
  BASE_LIMIT_MAX,
  bundlePostsSpec,
  costOf,
  DEFAULT_PLATFORM,
  findOperation,
  normalizeTarget,
  supportsBundle,
  type OperationSpec,
  type Platform,
} from '@sdx/catalog';
import { createHash } from 'node:crypto';
import type { WorkspaceRow } from '@sdx/db';
import type { OperationGate } from '../context';
import { ApiError, RequestValidationError } from '../errors';

/** The body fields shared by job, batch and schedule requests. */
export interface RecipeInput {
  platform?: string;
  operation: string;
  limit?: number;
  include_posts?: number;
}

/** A checked request: the operation, the effective limit and the maximum cost per target. */
export interface Recipe {
  platform: Platform;
  operation: string;
  spec: OperationSpec;
  /** min(limit, max_results). */
  limit: number;
  includePosts: number;
  /** Maximum credits one target can cost: what is reserved at acceptance. */
  maxCredits: number;
  /** Maximum results one target can deliver. */
  maxUnits: number;
}

export const DEFAULT_LIMIT = 12;

/**
 * Checks, cheapest first after the schema: catalog (unsupported_operation), limit rules
 * (validation error above max(200, max_results); invalid_request above the workspace's
 * max_result_limit; include_posts only on profile operations). Targets are checked apart.
 */
export function resolveRecipe(
  input: RecipeInput,
  targets: Array<{ value: string; loc: (string | number)[] }>,
  workspace: WorkspaceRow,
  gate: OperationGate,
): { recipe: Recipe; normalized: string[] } {
  const platform = input.platform ?? DEFAULT_PLATFORM;
  const spec = findOperation(platform, input.operation);
  if (!spec || !gate.isEnabled(platform, input.operation)) {
    throw new ApiError('unsupported_operation', `Operation ${input.operation} is not enabled for platform ${platform}.`, {
      platform,
      operation: input.operation,
    });
  }
  const normalized = targets.map((t) => checkTarget(platform as Platform, spec, t.value, t.loc));
  const requested = input.limit ?? DEFAULT_LIMIT;
  const bound = Math.max(BASE_LIMIT_MAX, spec.max_results);
  if (requested > bound) {
    throw new RequestValidationError([
      {
        loc: ['body', 'limit'],
        msg: `Input should be less than or equal to ${bound}`,
        type: 'less_than_equal',
        input: requested,
        ctx: { le: bound },
      },
    ]);
  }
  const limit = Math.min(requested, spec.max_results);
  if (limit > workspace.max_result_limit) {
    throw new ApiError('invalid_request', `limit ${limit} exceeds this workspace's max_result_limit of ${workspace.max_result_limit}.`, {
      limit,
      max_result_limit: workspace.max_result_limit,
    });
  }
  const includePosts = input.include_posts ?? 0;
  let maxCredits = costOf(spec, limit);
  let maxUnits = limit;
  if (includePosts > 0) {
    const postsSpec = supportsBundle(spec) ? bundlePostsSpec(platform as Platform) : undefined;
    if (!postsSpec) {
      throw new ApiError('invalid_request', 'include_posts is only accepted on profile operations.', { include_posts: includePosts });
    }
    maxCredits += costOf(postsSpec, includePosts);
    maxUnits += includePosts;
  }
  return {
    recipe: { platform: platform as Platform, operation: spec.operation, spec, limit, includePosts, maxCredits, maxUnits },
    normalized,
  };
}

function checkTarget(platform: Platform, spec: OperationSpec, target: string, loc: (string | number)[]): string {
  const check = normalizeTarget(platform, spec.target, target);
  if (!check.ok) {
    throw new ApiError('invalid_target', `Target ${JSON.stringify(target.trim())} ${check.reason}.`, {
      target,
      loc,
      platform,
      operation: spec.operation,
    });
  }
  return check.normalized;
}

/** Identity of a request for caching and deduplication. */
export function requestKey(recipe: Recipe, normalizedTarget: string): string {
  return createHash('sha256')
    .update([recipe.platform, recipe.operation, normalizedTarget, recipe.limit, recipe.includePosts].join('\u0000'))
    .digest('hex');
}

/** Cost of what a job delivered: items of the operation, plus bundled posts at the posts rate. */
export function deliveredCost(recipe: Pick<Recipe, 'platform' | 'spec' | 'includePosts'>, primary: number, bundled: number): number {
  let cost = costOf(recipe.spec, primary);
  if (recipe.includePosts > 0 && bundled > 0) {
    const postsSpec = bundlePostsSpec(recipe.platform);
    if (postsSpec) cost += costOf(postsSpec, bundled);
  }
  return cost;
}
