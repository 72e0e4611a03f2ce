import type { Executor, JobRow } from '@sdx/db';
import { ApiError } from '../errors';
import { loadJobById } from './queries';

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

export function isTerminal(status: string): boolean {
  return TERMINAL.has(status);
}

/**
 * Polls the job (20 ms to 250 ms apart) until it is terminal, the timeout passes or `signal`
 * aborts, and answers the last state read (POST /v1/extract, and MCP's extract, which follows
 * each state read with `onRead` to send its progress).
 */
export async function waitForJob(
  db: Executor,
  jobId: string,
  timeoutMs: number,
  signal?: AbortSignal,
  onRead?: (job: JobRow) => Promise<void>,
): Promise<JobRow> {
  const deadline = Date.now() + timeoutMs;
  let delay = 20;
  for (;;) {
    const job = await loadJobById(db, jobId);
    if (!job) throw new Error(`job ${jobId} vanished`);
    await onRead?.(job);
    if (isTerminal(job.status) || Date.now() >= deadline || signal?.aborted) return job;
    await new Promise((resolve) => setTimeout(resolve, Math.min(delay, Math.max(1, deadline - Date.now()))));
    delay = Math.min(delay * 1.5, 250);
  }
}

/** 502 extraction_failed for a synchronous extraction whose job failed or was cancelled, naming the job and the cause. */
export function extractionFailed(job: JobRow): ApiError {
  const cause = job.status === 'failed' ? job.error : { code: 'cancelled', message: 'The job was cancelled.', retryable: false };
  return new ApiError(
    'extraction_failed',
    `Job ${job.id} ${job.status}: ${(cause as { message?: string } | null)?.message ?? 'no detail'}`,
    {
      job_id: job.id,
      cause,
    },
  );
}
