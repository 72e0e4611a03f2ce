import { listMonitorChanges } from '@sdx/domain/api';
import { jsonBytes } from '../bound';
import { componentSchema, toolInput } from '../contract-schema';
import { defineTool } from '../tool';
import { MONITOR_ID_ARGUMENT } from './get_series';
import { listMonitorChanges as listMonitorChangesRoute } from '../../routes/listMonitorChanges';

/** GET /v1/monitors/{monitor_id}/changes: a page of a monitor's changes, newest first, within the output budget. */
export const listChanges = defineTool<
  { monitor_id: string; target?: string; kind?: 'metric_changed' | 'field_changed' | 'new_item'; limit?: number; starting_after?: string },
  unknown
>({
  name: 'list_changes',
  description:
    "What a monitor's runs found changed, newest first: metric_changed (a count or metric moved: before, after, change_pct), field_changed (a profile's display_name, bio, verified, private or url) " +
    'and new_item (a post or video no earlier run listed). Free. Up to `limit` (at most 100); when has_more is true, call again with starting_after set to the last id.',
  route: listMonitorChangesRoute,
  input: toolInput(listMonitorChangesRoute, {
    fields: ['monitor_id', 'target', 'kind', 'limit', 'starting_after'],
    narrow: {
      monitor_id: MONITOR_ID_ARGUMENT,
      target: { minLength: 1 },
      starting_after: { minLength: 1, description: 'The id of the last change of the previous answer.' },
    },
  }),
  output: {
    type: 'object',
    properties: {
      changes: { type: 'array', items: componentSchema('MonitorChange') },
      has_more: { type: 'boolean', description: 'True when more changes follow: call again with starting_after set to the last id.' },
    },
    required: ['changes', 'has_more'],
  },
  annotations: {
    title: "List a monitor's changes",
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  async run(ctx, input) {
    const page = await listMonitorChanges(
      ctx.deps.services.db,
      ctx.tenant,
      input.monitor_id,
      { target: input.target, kind: input.kind },
      { limit: input.limit ?? 50, startingAfter: input.starting_after ?? null },
    );
    const changes = page.data;
    let hasMore = page.has_more;
    // Changes are never cut inside: the newest that fit are answered, and has_more goes on after the last.
    while (changes.length > 1 && jsonBytes({ changes, has_more: true }) > ctx.budget) {
      changes.pop();
      hasMore = true;
    }
    return {
      structured: { changes, has_more: hasMore },
      summary: `${changes.length} changes${hasMore ? `; more with starting_after "${changes.at(-1)?.id}"` : ''}.`,
    };
  },
});
