import { z } from 'zod';
import { quote as priceOf } from '@sdx/domain/api';
import { defineTool, jobInput } from '../tool';

/** Numbers as people read them ("25,000"), a noun singular or plural by its count. */
const NUMBER = new Intl.NumberFormat('en-US');
const count = (n: number, one: string, other: string) => `${NUMBER.format(n)} ${n === 1 ? one : other}`;

/** POST /v1/quotes: what start_job or extract would reserve now; writes nothing. */
export const quote = defineTool({
  name: 'quote',
  description:
    'Prices a job before you run it: the most credits start_job or extract would reserve for `target` (or for each of `targets`), ' +
    'whether the workspace can afford it now, and what would block it (blocked_by). Free, writes nothing. ' +
    'Call it before start_job or extract when cost matters.',
  route: 'POST /v1/quotes',
  input: z
    .strictObject({
      platform: jobInput.platform,
      operation: jobInput.operation,
      target: jobInput.target.optional(),
      targets: z.array(jobInput.target).min(1).max(1000).optional().describe('Several targets, priced as one batch.'),
      limit: jobInput.limit,
    })
    .refine((value) => (value.target === undefined) !== (value.targets === undefined), { message: 'Give exactly one of target and targets.', path: ['target'] }),
  output: z.looseObject({
    platform: z.string(),
    operation: z.string(),
    requested_limit: z.number(),
    target_count: z.number(),
    max_credits: z.number().describe('The most credits the job would reserve (settled at what it delivers).'),
    cached_targets: z.number(),
    available_credits: z.number(),
    affordable: z.boolean(),
    blocked_by: z.enum(['insufficient_credits', 'concurrent_job_limit_exceeded', 'spend_cap_reached']).nullable(),
    active_jobs: z.number(),
    max_active_jobs: z.number(),
  }),
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
