import { getUsage as usageOf } from '@sdx/domain/api';
import { getCurrentUsage } from '../../routes/getCurrentUsage';
import { componentSchema, toolInput } from '../contract-schema';
import { defineTool } from '../tool';

/** GET /v1/usage/current: the workspace's credits this month. */
export const getUsage = defineTool<Record<string, never>, unknown>({
  name: 'get_usage',
  description:
    "The workspace's credits: the month's allowance, used, reserved by running jobs, and remaining (plan, promotional and purchased). Free.",
  route: getCurrentUsage,
  input: toolInput(getCurrentUsage, { fields: [] }),
  output: componentSchema('UsageResponse'),
  annotations: {
    title: 'Credits used and remaining',
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  async run(ctx) {
    const usage = await usageOf(ctx.deps.services.db, ctx.tenant.workspace, ctx.deps.services.clock.now());
    return {
      structured: usage,
      summary: `${usage.credits_remaining} credits remaining (${usage.credits_used} used, ${usage.credits_reserved} reserved) since ${usage.period_start}.`,
    };
  },
});
