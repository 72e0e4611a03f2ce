import { boundedItems } from '../bound';
import { toolInput } from '../contract-schema';
import { defineTool } from '../tool';
import { JOB_ID_ARGUMENT } from './get_job';
import { listJobItems as listJobItemsRoute } from '../../routes/listJobItems';

/** The largest page get_items reads (GET /v1/jobs/{job_id}/items takes the same). */
export const ITEMS_LIMIT_MAX = 100;

/** GET /v1/jobs/{job_id}/items: a page of a completed job's results, within the output budget. */
export const getItems = defineTool<{ job_id: string; cursor?: string; limit?: number }, unknown>({
  name: 'get_items',
  description:
    "Reads a completed job's results, up to `limit` items (at most 100) from `cursor`. Free. " +
    'To read everything: call without cursor, then call again with cursor set to the next_cursor of each answer until next_cursor is null. ' +
    'An answer may hold fewer items than asked (truncated: true) so that it stays within the output size bound; ' +
    'nothing is lost: next_cursor goes on from the first item not returned.',
  route: listJobItemsRoute,
  input: toolInput(listJobItemsRoute, {
    fields: ['job_id', 'cursor', 'limit'],
    narrow: {
      job_id: JOB_ID_ARGUMENT,
      cursor: { description: 'next_cursor of the previous answer; absent for the first page.' },
      limit: { maximum: ITEMS_LIMIT_MAX, description: `Most items to return (default and maximum ${ITEMS_LIMIT_MAX}).` },
    },
  }),
  output: {
    type: 'object',
    properties: {
      items: { type: 'array', items: {}, description: 'Result items, in the order of the result.' },
      next_cursor: {
        anyOf: [{ type: 'string' }, { type: 'null' }],
        description: 'Pass it as cursor to read on; null at the end of the result.',
      },
      truncated: { type: 'boolean', description: 'True when the output size bound, not limit, ended this page.' },
      skipped_oversized: {
        type: 'number',
        description: 'Items passed over because one alone exceeds the output bound (read them with GET /v1/jobs/{job_id}/items).',
      },
    },
    required: ['items', 'next_cursor', 'truncated', 'skipped_oversized'],
  },
  annotations: { title: 'Read job results', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(ctx, input) {
    const page = { limit: input.limit ?? ITEMS_LIMIT_MAX, cursor: input.cursor ?? null };
    const read = await boundedItems(ctx.deps.services, ctx.tenant, input.job_id, page, { skipped_oversized: 0 }, ctx.budget);
    const more = read.next_cursor === null ? 'end of the result' : `more with cursor "${read.next_cursor}"`;
    return { structured: read, summary: `${read.items.length} items${read.truncated ? ' (cut to the output bound)' : ''}; ${more}.` };
  },
});
