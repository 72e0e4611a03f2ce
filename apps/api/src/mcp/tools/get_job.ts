import { z } from 'zod';
import { attemptSourcesOf, getJobOrThrow } from '@sdx/domain/api';
import { describeJob, jobWithoutResult } from '../jobs';
import { defineTool, JobSummary } from '../tool';

export const jobIdInput = z.string().min(1).max(64).describe('The job ID start_job or extract answered, e.g. "job_01H...".');

/** GET /v1/jobs/{job_id}, without the result. */
export const getJob = defineTool({
  name: 'get_job',
  description:
    "A job's state and progress, without its results: status (queued, running, completed, failed, cancelled), results so far, credits reserved and billed. " +
    'Free. Call it again to follow a job start_job or extract handed back; once status is completed, read the results with get_items.',
  route: 'GET /v1/jobs/:job_id',
  input: z.strictObject({ job_id: jobIdInput }),
  output: z.object({ job: JobSummary }),
  annotations: { title: 'Follow a job', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(ctx, input) {
    const job = await getJobOrThrow(ctx.deps.services.db, ctx.tenant, input.job_id);
    // As GET /v1/jobs/{id}: the sources live attempts tried (none before the first attempt has run).
    const live = job.attempts > 0 && (ctx.deps.registry.resolve(job.platform, job.operation)?.sources?.length ?? 0) > 0;
    const attempt_sources = live ? await attemptSourcesOf(ctx.deps.services.db, job.id) : [];
    return { structured: { job: jobWithoutResult(job, attempt_sources.length > 0 ? { attempt_sources } : {}) }, summary: describeJob(job) };
  },
});
