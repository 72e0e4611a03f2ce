import { createJob, extractionFailed } from '@sdx/domain/api';
import { extract as extractRoute, SYNC_LIMIT_MAX } from '../../routes/extract';
import { boundedItems } from '../bound';
import { describeJob, followJob, jobWithoutResult } from '../jobs';
import { toolInput } from '../contract-schema';
import { defineTool, JobSummary, OPERATION_ARGUMENT, PLATFORM_ARGUMENT } from '../tool';
import type { BodyOf } from '../../routes/route';
import { ITEMS_LIMIT_MAX } from './get_items';

/**
 * POST /v1/extract: the job runs on the worker fleet and the call waits for it, at most
 * SYNC_TIMEOUT_MS, sending progress notifications. Completed: its first items within the output
 * budget, and the cursor to read on with get_items. Still running: the job, to follow with get_job.
 */
export const extract = defineTool<Pick<BodyOf<'extract'>, 'platform' | 'operation' | 'target' | 'limit'>, unknown>({
  name: 'extract',
  description:
    `Extracts and waits for the results (limit at most ${SYNC_LIMIT_MAX}; use start_job for more). Bills credits like start_job (call quote first to see the price). ` +
    'Answers the job and its first items. If truncated is true or next_cursor is not null, read the rest with get_items (job_id, cursor = next_cursor) until next_cursor is null. ' +
    'If the job is not done within the wait (completed: false), follow it with get_job, then read the results with get_items.',
  route: extractRoute,
  input: toolInput(extractRoute, {
    fields: ['platform', 'operation', 'target', 'limit'],
    own: { operation: OPERATION_ARGUMENT },
    narrow: { platform: PLATFORM_ARGUMENT },
    required: ['platform'],
  }),
  output: {
    type: 'object',
    properties: {
      job: JobSummary,
      completed: { type: 'boolean', description: 'False when the wait ended before the job did: follow it with get_job.' },
      items: { type: 'array', items: {}, description: 'The first result items.' },
      next_cursor: {
        anyOf: [{ type: 'string' }, { type: 'null' }],
        description: 'Pass it with job_id to get_items to read on; null when every item is here.',
      },
      truncated: { type: 'boolean', description: 'True when the output size bound cut the items.' },
      skipped_oversized: { type: 'number', description: 'Items passed over because one alone exceeds the output bound.' },
    },
    required: ['job', 'completed', 'items', 'next_cursor', 'truncated', 'skipped_oversized'],
  },
  annotations: { title: 'Extract and wait', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async run(ctx, input) {
    const { services } = ctx.deps;
    const created = await createJob(services, ctx.tenant, input, {
      endpoint: 'POST /v1/extract',
      requestId: ctx.res.locals.requestId as string,
      maxSyncLimit: SYNC_LIMIT_MAX,
    });
    const job = await followJob(ctx, created.job, services.config.syncTimeoutMs);
    const flags = { deduplicated: created.deduplicated, idempotent_replay: created.idempotentReplay };
    const rendered = jobWithoutResult(job, flags);
    if (job.status === 'failed' || job.status === 'cancelled') throw extractionFailed(job);
    if (job.status !== 'completed' || job.result_expired) {
      return {
        structured: { job: rendered, completed: false, items: [], next_cursor: null, truncated: false, skipped_oversized: 0 },
        summary: `${describeJob(job)} Still running after the wait: follow it with get_job, then read its results with get_items.`,
      };
    }
    const frame = { job: rendered, completed: true, skipped_oversized: 0 };
    const read = await boundedItems(services, ctx.tenant, job.id, { limit: ITEMS_LIMIT_MAX, cursor: null }, frame, ctx.budget);
    const more =
      read.next_cursor === null ? 'every result is here' : `read on with get_items, job_id "${job.id}", cursor "${read.next_cursor}"`;
    return {
      structured: { job: rendered, completed: true, ...read },
      summary: `${describeJob(job)} ${read.items.length} items here; ${more}.`,
    };
  },
});
