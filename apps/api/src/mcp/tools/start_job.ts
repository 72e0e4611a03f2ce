import { createJob } from '@sdx/domain/api';
import { followJob, jobWithoutResult } from '../jobs';
import { toolInput } from '../contract-schema';
import { defineTool, JobSummary, OPERATION_ARGUMENT, PLATFORM_ARGUMENT } from '../tool';
import type { BodyOf } from '../../routes/route';
import { createJob as createJobRoute } from '../../routes/createJob';

/** POST /v1/jobs: answers at once with the queued job (or the replayed, deduplicated or cached one). */
export const startJob = defineTool<
  Pick<BodyOf<'createJob'>, 'platform' | 'operation' | 'target' | 'limit'> & { idempotency_key?: string },
  unknown
>({
  name: 'start_job',
  description:
    'Starts an extraction job and answers at once with the job (without results). Bills credits: the most the job can cost is reserved now, ' +
    'and it is settled at what it delivers (call quote first to see the price). Follow it with get_job until status is completed, ' +
    'then read the results page by page with get_items. Pass the same idempotency_key to retry safely without starting a second job. ' +
    'Use it for large limits; extract is simpler for small ones.',
  route: createJobRoute,
  input: toolInput(createJobRoute, {
    fields: ['platform', 'operation', 'target', 'limit', 'idempotency_key'],
    narrow: { platform: PLATFORM_ARGUMENT },
    own: {
      operation: OPERATION_ARGUMENT,
      idempotency_key: {
        type: 'string',
        minLength: 1,
        maxLength: 128,
        description:
          'Makes a retry return the first job instead of starting another (kept 24 hours): the Idempotency-Key of POST /v1/jobs.',
      },
    },
    required: ['platform'],
  }),
  output: { type: 'object', properties: { job: JobSummary }, required: ['job'] },
  annotations: { title: 'Start a job', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async run(ctx, input) {
    const created = await createJob(
      ctx.deps.services,
      ctx.tenant,
      { platform: input.platform, operation: input.operation, target: input.target, limit: input.limit },
      { endpoint: 'POST /v1/jobs', idempotencyKey: input.idempotency_key ?? null, requestId: ctx.res.locals.requestId as string },
    );
    // One notification of the job's state at admission: the call answers at once, so no later one could reach the client.
    const job = await followJob(ctx, created.job, 0);
    const flags = { deduplicated: created.deduplicated, idempotent_replay: created.idempotentReplay };
    return {
      structured: { job: jobWithoutResult(job, flags) },
      summary: `Job ${job.id} is ${job.status}, ${job.reserved_credits} credits reserved; follow it with get_job, then read its results with get_items.`,
    };
  },
});
