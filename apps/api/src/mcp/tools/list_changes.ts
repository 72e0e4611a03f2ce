import { z } from 'zod';
import { listMonitorChanges } from '@sdx/domain/api';
import { jsonBytes } from '../bound';
import { defineTool } from '../tool';
import { monitorIdInput } from './get_series';

/** GET /v1/monitors/{monitor_id}/changes: a page of a monitor's changes, newest first, within the output budget. */
export const listChanges = defineTool({
  name: 'list_changes',
  description:
    "What a monitor's runs found changed, newest first: metric_changed (a count or metric moved: before, after, change_pct), field_changed (a profile's display_name, bio, verified, private or url) " +
    'and new_item (a post or video no earlier run listed). Free. Up to `limit` (at most 100); when has_more is true, call again with starting_after set to the last id.',
  route: 'GET /v1/monitors/:monitor_id/changes',
  input: z.strictObject({
    monitor_id: monitorIdInput,
    target: z.string().min(1).max(255).optional().describe('Only this target.'),
    kind: z.enum(['metric_changed', 'field_changed', 'new_item']).optional().describe('Only changes of this kind.'),
    limit: z.int().min(1).max(100).optional().describe('Most changes to return (default 50).'),
    starting_after: z.string().min(1).max(64).optional().describe('The id of the last change of the previous answer.'),
  }),
  output: z.object({
    changes: z.array(z.looseObject({ id: z.string(), run_id: z.string(), target: z.string(), kind: z.string(), at: z.string() })),
    has_more: z.boolean().describe('True when more changes follow: call again with starting_after set to the last id.'),
  }),
  annotations: { title: "List a monitor's changes", readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
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
    return { structured: { changes, has_more: hasMore }, summary: `${changes.length} changes${hasMore ? `; more with starting_after "${changes.at(-1)?.id}"` : ''}.` };
  },
});
