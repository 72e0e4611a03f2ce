import { cancelJob as cancel } from '@sdx/domain/api';
import { cancelJob as cancelJobRoute } from '../../routes/cancelJob';
import { toolInput } from '../contract-schema';
import { describeJob, jobWithoutResult } from '../jobs';
import { defineTool, JobSummary } from '../tool';
import { JOB_ID_ARGUMENT } from './get_job';

/** POST /v1/jobs/{job_id}/cancel: idempotent; a finished job comes back unchanged. */
export const cancelJob = defineTool<{ job_id: string }, unknown>({
  name: 'cancel_job',
  description:
    'Cancels a queued or running job: its reserved credits are released and nothing is billed. A job that already ended comes back unchanged. ' +
    'Answers the job (without results).',
  route: cancelJobRoute,
  input: toolInput(cancelJobRoute, { fields: ['job_id'], narrow: { job_id: JOB_ID_ARGUMENT } }),
  output: { type: 'object', properties: { job: JobSummary }, required: ['job'] },
  annotations: { title: 'Cancel a job', readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run(ctx, input) {
    const job = await cancel(ctx.deps.services, ctx.tenant, input.job_id);
    return { structured: { job: jobWithoutResult(job) }, summary: describeJob(job) };
  },
});
