import { z } from 'zod';
import { cancelJob as cancel } from '@sdx/domain/api';
import { describeJob, jobWithoutResult } from '../jobs';
import { defineTool, JobSummary } from '../tool';
import { jobIdInput } from './get_job';

/** POST /v1/jobs/{job_id}/cancel: idempotent; a finished job comes back unchanged. */
export const cancelJob = defineTool({
  name: 'cancel_job',
  description:
    'Cancels a queued or running job: its reserved credits are released and nothing is billed. A job that already ended comes back unchanged. ' +
    'Answers the job (without results).',
  route: 'POST /v1/jobs/:job_id/cancel',
  input: z.strictObject({ job_id: jobIdInput }),
  output: z.object({ job: JobSummary }),
  annotations: { title: 'Cancel a job', readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run(ctx, input) {
    const job = await cancel(ctx.deps.services, ctx.tenant, input.job_id);
    return { structured: { job: jobWithoutResult(job) }, summary: describeJob(job) };
  },
});
