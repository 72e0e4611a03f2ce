import { z } from 'zod';
import { boundedItems } from '../bound';
import { cursorInput, defineTool } from '../tool';
import { jobIdInput } from './get_job';

/** The largest page get_items reads (GET /v1/jobs/{job_id}/items takes the same). */
export const ITEMS_LIMIT_MAX = 100;

/** GET /v1/jobs/{job_id}/items: a page of a completed job's results, within the output budget. */
export const getItems = defineTool({
  name: 'get_items',
  description:
    "Reads a completed job's results, up to `limit` items (at most 100) from `cursor`. Free. " +
    'To read everything: call without cursor, then call again with cursor set to the next_cursor of each answer until next_cursor is null. ' +
    'An answer may hold fewer items than asked (truncated: true) so that it stays within the output size bound; ' +
    'nothing is lost: next_cursor goes on from the first item not returned.',
  route: 'GET /v1/jobs/:job_id/items',
  input: z.strictObject({
    job_id: jobIdInput,
    cursor: cursorInput.optional().describe('next_cursor of the previous answer; absent for the first page.'),
    limit: z.int().min(1).max(ITEMS_LIMIT_MAX).optional().describe('Most items to return (default and maximum 100).'),
  }),
  output: z.object({
    items: z.array(z.unknown()).describe('Result items, in the order of the result.'),
    next_cursor: z.string().nullable().describe('Pass it as cursor to read on; null at the end of the result.'),
    truncated: z.boolean().describe('True when the output size bound, not limit, ended this page.'),
    skipped_oversized: z.number().describe('Items passed over because one alone exceeds the output bound (read them with GET /v1/jobs/{job_id}/items).'),
  }),
  annotations: { title: 'Read job results', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(ctx, input) {
    const page = { limit: input.limit ?? ITEMS_LIMIT_MAX, cursor: input.cursor ?? null };
    const read = await boundedItems(ctx.deps.services, ctx.tenant, input.job_id, page, { skipped_oversized: 0 }, ctx.budget);
    const more = read.next_cursor === null ? 'end of the result' : `more with cursor "${read.next_cursor}"`;
    return { structured: read, summary: `${read.items.length} items${read.truncated ? ' (cut to the output bound)' : ''}; ${more}.` };
  },
});
