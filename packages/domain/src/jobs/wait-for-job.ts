import type { Executor, JobRow } from '@sdx/db';
import { loadJobById } from './queries';

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

export function isTerminal(status: string): boolean {
  return TERMINAL.has(status);
}

/** Polls the job until it is terminal or the timeout passes (POST /v1/extract). */
export async function waitForJob(db: Executor, jobId: string, timeoutMs: number, signal?: AbortSignal): Promise<JobRow> {
  const deadline = Date.now() + timeoutMs;
  let delay = 20;
  for (;;) {
    const job = await loadJobById(db, jobId);
    if (!job) throw new Error(`job ${jobId} vanished`);
    if (isTerminal(job.status) || Date.now() >= deadline || signal?.aborted) return job;
    await new Promise((resolve) => setTimeout(resolve, Math.min(delay, Math.max(1, deadline - Date.now()))));
    delay = Math.min(delay * 1.5, 250);
  }
}
