import { z } from 'zod';
import { createMonitor as create, MAX_MONITOR_ALERTS, MAX_MONITOR_TARGETS, type MonitorInput, renderMonitor } from '@sdx/domain/api';
import { defineTool } from '../tool';

/** POST /v1/monitors: a monitor of a monitorable operation over targets, on a recurrence. */
export const createMonitor = defineTool({
  name: 'create_monitor',
  description:
    'Creates a monitor: one operation (a profile, or a target\'s own posts or videos; list_operations marks them monitorable) run over 1 to 1000 targets ' +
    'hourly, daily or weekly, keeping each count or metric as a series (read it with get_series) and what changed (list_changes). ' +
    'Each run is billed as a batch of those targets; the answer gives estimated_credits_per_run and estimated_credits_per_month. ' +
    'alerts fire webhooks (monitor.alert) when a metric crosses a threshold (above, below), moves by a percentage (change_pct_above) or a new item appears (new_item).',
  route: 'POST /v1/monitors',
  input: z.strictObject({
    name: z.string().min(1).max(120).optional().describe('A name for people; defaults to the operation and targets.'),
    platform: z.string().min(1).max(30).optional().describe('A platform of list_operations, e.g. "instagram".'),
    operation: z.string().min(1).max(64).describe('A monitorable operation of that platform, e.g. "profile" or "posts".'),
    targets: z.array(z.string().min(1).max(255)).min(1).max(MAX_MONITOR_TARGETS).describe('What to follow: handles, URLs or IDs.'),
    limit: z.int().min(1).max(25_000).optional().describe('Items each run reads per target (list operations).'),
    frequency: z.enum(['hourly', 'daily', 'weekly']).describe('How often it runs.'),
    time_of_day: z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/).optional().describe('HH:MM in the timezone (daily, weekly; hourly takes its minutes).'),
    day_of_week: z.enum(['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday']).optional().describe('The day of a weekly monitor.'),
    timezone: z.string().min(1).max(64).optional().describe('An IANA zone, e.g. "Europe/Paris"; UTC when absent.'),
    alerts: z
      .array(
        z.strictObject({
          metric: z.string().min(1).max(64).describe('followers_count, following_count, posts_count, or an item\'s views, likes, comments, shares.'),
          condition: z.enum(['above', 'below', 'change_pct_above', 'new_item']),
          threshold: z.number().optional().describe('Needed by above, below and change_pct_above.'),
          target: z.string().min(1).max(255).optional().describe('Only this target; every target when absent.'),
        }),
      )
      .max(MAX_MONITOR_ALERTS)
      .optional(),
  }),
  output: z.object({ monitor: z.looseObject({ id: z.string(), status: z.string(), next_run_at: z.string().nullable(), estimated_credits_per_run: z.number(), estimated_credits_per_month: z.number() }) }),
  annotations: { title: 'Create a monitor', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async run(ctx, input) {
    const monitor = renderMonitor(await create(ctx.deps.services, ctx.tenant, input as MonitorInput));
    return {
      structured: { monitor },
      summary: `Monitor ${monitor.id} follows ${monitor.targets.length} targets ${monitor.frequency}, next run ${monitor.next_run_at ?? 'none'}, about ${monitor.estimated_credits_per_run} credits a run.`,
    };
  },
});
