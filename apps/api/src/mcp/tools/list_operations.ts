import { z } from 'zod';
import { itemsThatFit } from '../bound';
import { cursorInput, defineTool } from '../tool';

const Operation = z.object({
  platform: z.string(),
  operation: z.string(),
  target_kind: z.string().describe('What `target` names: a profile handle, a post URL, a search query, ...'),
  max_limit: z.number().describe('The largest `limit` the operation takes.'),
  credits_per_result: z.number(),
  results_per_credit: z.number(),
  base_credits: z.number().describe('Credits charged per job whatever it delivers.'),
});

/** Operations in one answer unless `limit` says otherwise (the REST lists' default), and the most. */
export const LIST_OPERATIONS_DEFAULT_LIMIT = 25;
export const LIST_OPERATIONS_MAX_LIMIT = 100;

/** GET /v1/platforms, as the catalog of extensions-2.md 3: one entry per enabled operation. */
export const listOperations = defineTool({
  name: 'list_operations',
  description:
    'Lists what can be extracted: each platform and operation, the kind of target it takes, its maximum limit and its price in credits. ' +
    `Free. Pass \`platform\` to list one platform only. At most \`limit\` operations an answer (default ${LIST_OPERATIONS_DEFAULT_LIMIT}, at most ${LIST_OPERATIONS_MAX_LIMIT}); ` +
    'if the answer says truncated: true, call again with cursor set to next_cursor.',
  route: 'GET /v1/platforms',
  input: z.strictObject({
    platform: z.string().min(1).max(64).optional().describe('Only this platform, e.g. "instagram".'),
    limit: z
      .number()
      .int()
      .min(1)
      .max(LIST_OPERATIONS_MAX_LIMIT)
      .optional()
      .describe(`The most operations in one answer (default ${LIST_OPERATIONS_DEFAULT_LIMIT}).`),
    cursor: cursorInput.optional().describe('next_cursor of the previous answer, to go on.'),
  }),
  output: z.object({
    operations: z.array(Operation),
    truncated: z.boolean(),
    next_cursor: z.string().nullable(),
  }),
  annotations: { title: 'List operations and prices', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(ctx, input) {
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
    return {
      structured: { operations, truncated, next_cursor: truncated ? String(from + fit) : null },
      summary: `${operations.length} of ${all.length} operations${truncated ? `; more with cursor "${from + fit}"` : ''}.`,
    };
  },
});
