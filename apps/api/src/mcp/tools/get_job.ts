import { attemptSourcesOf, getJobOrThrow } from '@sdx/domain/api';
import { getJob as getJobRoute } from '../../routes/getJob';
import { toolInput } from '../contract-schema';
import { describeJob, jobWithoutResult } from '../jobs';
import { defineTool, ID_ARGUMENT, JobSummary } from '../tool';

/** A job's ID as the tools take it: the contract's `job_id` parameter, bounded. */
export const JOB_ID_ARGUMENT = { ...ID_ARGUMENT, description: 'The job ID start_job or extract answered, e.g. "job_01H...".' };

/** GET /v1/jobs/{job_id}, without the result. */
export const getJob = defineTool<{ job_id: string }, unknown>({
  name: 'get_job',
  description:
    "A job's state and progress, without its results: status (queued, running, completed, failed, cancelled), results so far, credits reserved and billed. " +
    'Free. Call it again to follow a job start_job or extract handed back; once status is completed, read the results with get_items.',
  route: getJobRoute,
  input: toolInput(getJobRoute, { fields: ['job_id'], narrow: { job_id: JOB_ID_ARGUMENT } }),
  output: { type: 'object', properties: { job: JobSummary }, required: ['job'] },
  annotations: { title: 'Follow a job', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(ctx, input) {
    const job = await getJobOrThrow(ctx.deps.services.db, ctx.tenant, input.job_id);
    // As GET /v1/jobs/{id}: the sources live attempts tried (none before the first attempt has run).
    const live = job.attempts > 0 && (ctx.deps.registry.resolve(job.platform, job.operation)?.sources?.length ?? 0) > 0;
    const attempt_sources = live ? await attemptSourcesOf(ctx.deps.services.db, job.id) : [];
    return { structured: { job: jobWithoutResult(job, attempt_sources.length > 0 ? { attempt_sources } : {}) }, summary: describeJob(job) };
  },
});
