import {
  BASE_LIMIT_MAX,
  bundlePostsSpec,
  costOf,
  DEFAULT_LIMIT,
  CATALOG,
  DEFAULT_PLATFORM,
  findOperation,
  PLATFORMS,
  normalizeTarget,
  supportsBundle,
  type OperationSpec,
  type Platform,
} from '@sdx/catalog';
import { createHash } from 'node:crypto';
import type { WorkspaceRow } from '@sdx/db';
import type { OperationGate } from '../resources';
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
  /** The spec whose rates price bundled posts (the platform's posts operation), when include_posts > 0. */
  bundleSpec: OperationSpec | null;
  /** Maximum credits one target can cost: what is reserved at acceptance. */
  maxCredits: number;
  /** Maximum results one target can deliver. */
  maxUnits: number;
  /** The rates its jobs are priced at, recorded on their rows at admission. */
  rates: JobRates;
}

/** Words joined as a list: "a, b and c". */
function listed(words: readonly string[]): string {
  return words.length <= 1 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`;
}

/**
 * The message of unsupported_operation in words a person can act on: an unknown platform names
 * the known ones (and that X is `twitter`); an operation the platform does not offer names the
 * platform's own (enabled) operations.
 */
export function unsupportedMessage(platform: string, operation: string, gate: OperationGate): string {
  const known = PLATFORMS.filter((p) => CATALOG[p].some((o) => gate.isEnabled(p, o.operation)));
  if (!(known as readonly string[]).includes(platform)) {
    return `Unknown platform "${platform}". The platforms are ${listed(known.map((p) => `\`${p}\``))}; X (formerly Twitter) is \`twitter\`.`;
  }
  const operations = CATALOG[platform as Platform].filter((o) => gate.isEnabled(platform, o.operation)).map((o) => `\`${o.operation}\``);
  return `Platform ${platform} has no operation "${operation}". Its operations: ${listed(operations)} (GET /v1/platforms lists them with their limits and prices).`;
}

/**
 * Checks, cheapest first after the schema: catalog (unsupported_operation), limit rules
 * (validation error above max(200, max_results); invalid_request above the workspace's
 * max_result_limit; include_posts only on profile operations). Targets are checked apart.
 * Answers the recipe, each target normalized, and each target's request key (requestKey, in
 * `scope`: a new_only schedule's own).
 */
export function resolveRecipe(
  input: RecipeInput,
  targets: Array<{ value: string; loc: (string | number)[] }>,
  workspace: WorkspaceRow,
  gate: OperationGate,
  scope: string | null = null,
): { recipe: Recipe; normalized: string[]; keys: string[] } {
  const platform = input.platform ?? DEFAULT_PLATFORM;
  const spec = findOperation(platform, input.operation);
  if (!spec || !gate.isEnabled(platform, input.operation)) {
    throw new ApiError('unsupported_operation', unsupportedMessage(platform, input.operation, gate), {
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
  let bundleSpec: OperationSpec | null = null;
  if (includePosts > 0) {
    bundleSpec = (supportsBundle(spec) ? bundlePostsSpec(platform as Platform) : undefined) ?? null;
    if (!bundleSpec) {
      throw new ApiError('invalid_request', 'include_posts is only accepted on profile operations.', { include_posts: includePosts });
    }
  }
  const rates = ratesOf({ spec, bundleSpec });
  const recipe: Recipe = {
    platform: platform as Platform,
    operation: spec.operation,
    spec,
    limit,
    includePosts,
    bundleSpec,
    maxCredits: priceOf(rates, limit, includePosts),
    maxUnits: limit + includePosts,
    rates,
  };
  return { recipe, normalized, keys: normalized.map((target) => requestKey(recipe, target, scope)) };
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

/**
 * Identity of a request for caching and deduplication. `scope` sets apart requests whose results
 * differ from a plain request's for the same target (a new_only schedule's).
 */
export function requestKey(
  recipe: Pick<Recipe, 'platform' | 'operation' | 'limit' | 'includePosts'>,
  normalizedTarget: string,
  scope: string | null = null,
): string {
  const parts = [recipe.platform, recipe.operation, normalizedTarget, recipe.limit, recipe.includePosts];
  if (scope !== null) parts.push(scope);
  return createHash('sha256').update(parts.join('\u0000')).digest('hex');
}

/** The rates a job is priced at, recorded on its row at admission. */
export interface JobRates {
  credit_rate: number;
  results_per_credit: number;
  base_credits: number;
  bundle_credit_rate: number | null;
  bundle_results_per_credit: number | null;
  bundle_base_credits: number | null;
}

/** The rates of a checked request, as its jobs record them. */
export function ratesOf(recipe: Pick<Recipe, 'spec' | 'bundleSpec'>): JobRates {
  return {
    credit_rate: recipe.spec.credits_per_result,
    results_per_credit: recipe.spec.results_per_credit,
    base_credits: recipe.spec.base_credits,
    bundle_credit_rate: recipe.bundleSpec?.credits_per_result ?? null,
    bundle_results_per_credit: recipe.bundleSpec?.results_per_credit ?? null,
    bundle_base_credits: recipe.bundleSpec?.base_credits ?? null,
  };
}

/**
 * The price rule, written once: what `primary` results of the operation plus `bundled` posts
 * cost at the given rates. Admission reserves it for the most a job can deliver; completion
 * charges it for what the job delivered, at the rates recorded on the job, never more than
 * was reserved.
 */
export function priceOf(rates: JobRates, primary: number, bundled: number): number {
  let cost = costOf(
    { base_credits: rates.base_credits, credits_per_result: rates.credit_rate, results_per_credit: rates.results_per_credit },
    primary,
  );
  if (bundled > 0 && rates.bundle_credit_rate !== null) {
    cost += costOf(
      {
        base_credits: rates.bundle_base_credits ?? 0,
        credits_per_result: rates.bundle_credit_rate,
        results_per_credit: rates.bundle_results_per_credit ?? 1,
      },
      bundled,
    );
  }
  return cost;
}

/** The charge of a job that delivered `primary` results and `bundled` posts: its price at its own rates, capped at its reservation. */
export function chargeOf(job: JobRates & { reserved_credits: number }, primary: number, bundled: number): number {
  return Math.min(priceOf(job, primary, bundled), job.reserved_credits);
}
