import { createMonitor as create, renderMonitor } from '@sdx/domain/api';
import { toolInput, componentSchema } from '../contract-schema';
import { defineTool } from '../tool';
import type { BodyOf } from '../../routes/route';
import { createMonitor as createMonitorRoute } from '../../routes/createMonitor';

/** POST /v1/monitors: a monitor of a monitorable operation over targets, on a recurrence. */
export const createMonitor = defineTool<BodyOf<'createMonitor'>, unknown>({
  name: 'create_monitor',
  description:
    "Creates a monitor: one operation (a profile, or a target's own posts or videos; list_operations marks them monitorable) run over 1 to 1000 targets " +
    'hourly, daily or weekly, keeping each count or metric as a series (read it with get_series) and what changed (list_changes). ' +
    'Each run is billed as a batch of those targets; the answer gives estimated_credits_per_run and estimated_credits_per_month. ' +
    'alerts fire webhooks (monitor.alert) when a metric crosses a threshold (above, below), moves by a percentage (change_pct_above) or a new item appears (new_item).',
  route: createMonitorRoute,
  input: toolInput(createMonitorRoute, {
    fields: ['name', 'platform', 'operation', 'targets', 'limit', 'frequency', 'time_of_day', 'day_of_week', 'timezone', 'alerts'],
  }),
  output: { type: 'object', properties: { monitor: componentSchema('Monitor') }, required: ['monitor'] },
  annotations: { title: 'Create a monitor', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async run(ctx, input) {
    const monitor = renderMonitor(await create(ctx.deps.services, ctx.tenant, input));
    return {
      structured: { monitor },
      summary: `Monitor ${monitor.id} follows ${monitor.targets.length} targets ${monitor.frequency}, next run ${monitor.next_run_at ?? 'none'}, about ${monitor.estimated_credits_per_run} credits a run.`,
    };
  },
});
