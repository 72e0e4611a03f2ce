import { quote as priceOf } from '@sdx/domain/api';
import { componentSchema, toolInput } from '../contract-schema';
import { defineTool, OPERATION_ARGUMENT, PLATFORM_ARGUMENT } from '../tool';
import { createQuote } from '../../routes/createQuote';
import type { BodyOf } from '../../routes/route';

/** Numbers as people read them ("25,000"), a noun singular or plural by its count. */
const NUMBER = new Intl.NumberFormat('en-US');
const count = (n: number, one: string, other: string) => `${NUMBER.format(n)} ${n === 1 ? one : other}`;

/** POST /v1/quotes: what start_job or extract would reserve now; writes nothing. */
export const quote = defineTool<Pick<BodyOf<'createQuote'>, 'platform' | 'operation' | 'target' | 'targets' | 'limit'>, unknown>({
  name: 'quote',
  description:
    'Prices a job before you run it: the most credits start_job or extract would reserve for `target` (or for each of `targets`), ' +
    'whether the workspace can afford it now, and what would block it (blocked_by). Free, writes nothing. ' +
    'Call it before start_job or extract when cost matters.',
  route: createQuote,
  input: toolInput(createQuote, {
    fields: ['platform', 'operation', 'target', 'targets', 'limit'],
    own: { operation: OPERATION_ARGUMENT },
    narrow: { platform: PLATFORM_ARGUMENT },
    required: ['platform'],
  }),
  output: componentSchema('QuoteResponse'),
  annotations: { title: 'Price a job', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(ctx, input) {
    const priced = await priceOf(ctx.deps.services, ctx.tenant, input);
    const verdict = priced.affordable ? 'affordable now' : `blocked by ${priced.blocked_by}`;
    return {
      structured: priced,
      summary: `At most ${count(priced.max_credits, 'credit', 'credits')} for ${count(priced.target_count, 'target', 'targets')} of ${priced.platform} ${priced.operation}; ${NUMBER.format(priced.available_credits)} available, ${verdict}.`,
    };
  },
});
