import { itemsThatFit } from '../bound';
import { toolInput } from '../contract-schema';
import { CURSOR_ARGUMENT, defineTool } from '../tool';
import { listPlatforms } from '../../routes/listPlatforms';

/** One operation of the catalog, as GET /v1/platforms lists it (PlatformResponse), flattened to one entry with its platform. */
const Operation = {
  type: 'object',
  properties: {
    platform: { type: 'string' },
    operation: { type: 'string' },
    target_kind: { type: 'string', description: 'What `target` names: a profile handle, a post URL, a search query, ...' },
    max_limit: { type: 'number', description: 'The largest `limit` the operation takes.' },
    credits_per_result: { type: 'number' },
    results_per_credit: { type: 'number' },
    base_credits: { type: 'number', description: 'Credits charged per job whatever it delivers.' },
  },
  required: ['platform', 'operation', 'target_kind', 'max_limit', 'credits_per_result', 'results_per_credit', 'base_credits'],
};

/** Operations in one answer unless `limit` says otherwise (the REST lists' default), and the most. */
export const LIST_OPERATIONS_DEFAULT_LIMIT = 25;
export const LIST_OPERATIONS_MAX_LIMIT = 100;

/** GET /v1/platforms, as the catalog of extensions-2.md 3: one entry per enabled operation. */
export const listOperations = defineTool<{ platform?: string; limit?: number; cursor?: string }, unknown>({
  name: 'list_operations',
  description:
    'Lists what can be extracted: each platform and operation, the kind of target it takes, its maximum limit and its price in credits. ' +
    `Free. Pass \`platform\` to list one platform only. At most \`limit\` operations an answer (default ${LIST_OPERATIONS_DEFAULT_LIMIT}, at most ${LIST_OPERATIONS_MAX_LIMIT}); ` +
    'if the answer says truncated: true, call again with cursor set to next_cursor.',
  route: listPlatforms,
  // GET /v1/platforms answers the whole catalog; an agent's answer is bounded, so these fields are the tool's own.
  input: toolInput(listPlatforms, {
    fields: ['platform', 'limit', 'cursor'],
    own: {
      platform: { type: 'string', minLength: 1, maxLength: 64, description: 'Only this platform, e.g. "instagram".' },
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: LIST_OPERATIONS_MAX_LIMIT,
        description: `The most operations in one answer (default ${LIST_OPERATIONS_DEFAULT_LIMIT}).`,
      },
      cursor: { ...CURSOR_ARGUMENT, description: 'next_cursor of the previous answer, to go on.' },
    },
  }),
  output: {
    type: 'object',
    properties: {
      operations: { type: 'array', items: Operation },
      truncated: { type: 'boolean' },
      next_cursor: { anyOf: [{ type: 'string' }, { type: 'null' }] },
    },
    required: ['operations', 'truncated', 'next_cursor'],
  },
  annotations: {
    title: 'List operations and prices',
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  run(ctx, input) {
    const all = ctx.deps.registry
      .platforms()
      .filter(({ platform }) => input.platform === undefined || platform === input.platform)
      .flatMap(({ platform, operations }) =>
        operations.map((spec) => ({
          platform,
          operation: spec.operation,
          target_kind: spec.target,
          max_limit: spec.max_results,
          credits_per_result: spec.credits_per_result,
          results_per_credit: spec.results_per_credit,
          base_credits: spec.base_credits,
        })),
      );
    const from = input.cursor !== undefined && /^\d{1,6}$/.test(input.cursor) ? Number(input.cursor) : 0;
    const rest = all.slice(from, from + (input.limit ?? LIST_OPERATIONS_DEFAULT_LIMIT));
    const fit = itemsThatFit({}, rest, ctx.budget);
    const truncated = from + fit < all.length;
    const operations = rest.slice(0, fit);
    return Promise.resolve({
      structured: { operations, truncated, next_cursor: truncated ? String(from + fit) : null },
      summary: `${operations.length} of ${all.length} operations${truncated ? `; more with cursor "${from + fit}"` : ''}.`,
    });
  },
});
