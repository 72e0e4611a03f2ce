import type { JobRow } from '@sdx/db';
import { type JobFlags, isTerminal, renderJob, waitForJob } from '@sdx/domain/api';
import type { ProgressUpdate, ToolContext } from './tool';

/** A job as the REST API renders it, without `result` (results are read with get_items). */
export function jobWithoutResult(job: JobRow, flags: JobFlags = {}) {
  const { result: _result, ...rest } = renderJob(job, null, flags);
  return rest;
}

/** One line about a job, for a tool result's text and for progress messages. */
export function describeJob(job: JobRow): string {
  const total = job.progress_total ?? job.requested_limit;
  const count = job.status === 'completed' ? `${job.result_count ?? 0} results` : `${job.progress_current}/${total ?? '?'} results`;
  return `Job ${job.id} (${job.platform} ${job.operation} ${job.target}) is ${job.status}: ${count}.`;
}

/** The progress notification of a job's state: results read so far of the expected total. */
function progressOf(job: JobRow): ProgressUpdate {
  const total = job.progress_total ?? job.requested_limit ?? undefined;
  const current = job.status === 'completed' ? (job.result_count ?? job.progress_current) : job.progress_current;
  return {
    progress: current,
    ...(total !== undefined && total !== null ? { total: Math.max(total, current) } : {}),
    message: describeJob(job),
  };
}

/**
 * Sends progress notifications for a job: the state given, then each change read while the job
 * runs (domain `waitForJob`, as POST /v1/extract waits: any API process follows any job), until
 * it is terminal, `timeoutMs` passes or `ctx.signal` aborts; answers the last state read. A
 * notification goes out only when the progress grew or the status changed, with a progress
 * never below the one before.
 */
export async function followJob(ctx: ToolContext, job: JobRow, timeoutMs: number): Promise<JobRow> {
  let shown = { progress: -1, status: '' };
  const show = async (state: JobRow) => {
    const update = progressOf(state);
    if (update.progress <= shown.progress && state.status === shown.status) return;
    const progress = Math.max(update.progress, shown.progress + (update.progress > shown.progress ? 0 : 1e-3));
    shown = { progress, status: state.status };
    await ctx.progress({ ...update, progress });
  };
  await show(job);
  if (isTerminal(job.status) || timeoutMs <= 0) return job;
  return waitForJob(ctx.deps.services.db, job.id, timeoutMs, ctx.signal, show);
}
