import type { JobRow } from '@sdx/db';
import { renderDelivery } from '../destinations/render';
import type { AttemptSource } from './attempt-sources';
import type { JobResult } from './results';

export interface JobFlags {
  deduplicated?: boolean;
  idempotent_replay?: boolean;
  /** The live sources of the job's attempts (GET /v1/jobs/{id} only; absent elsewhere). */
  attempt_sources?: AttemptSource[];
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

/** JobResponse of api-v1.md 2.4: every key, always (and `attempt_sources` where the caller read them). */
export function renderJob(job: JobRow, result: JobResult | null, flags: JobFlags = {}) {
  return {
    id: job.id,
    platform: job.platform,
    operation: job.operation,
    target: job.target,
    requested_limit: job.requested_limit,
    include_posts: job.include_posts,
    status: job.status,
    attempts: job.attempts,
    max_attempts: job.max_attempts,
    progress_stage: job.progress_stage,
    progress_message: job.progress_message,
    progress_current: job.progress_current,
    progress_total: job.progress_total,
    heartbeat_at: iso(job.heartbeat_at),
    next_attempt_at: iso(job.next_attempt_at),
    cancel_requested_at: iso(job.cancel_requested_at),
    result_count: job.result_count,
    billed_units: job.billed_units,
    credit_rate: job.credit_rate,
    results_per_credit: job.results_per_credit,
    reserved_credits: job.status === 'queued' || job.status === 'running' ? job.reserved_credits : 0,
    billed_credits: job.billed_credits,
    result: job.status === 'completed' && !job.result_expired ? result : null,
    result_expired: job.result_expired,
    error: job.status === 'failed' ? (job.error ?? null) : null,
    created_at: job.created_at.toISOString(),
    started_at: iso(job.started_at),
    finished_at: iso(job.finished_at),
    cached: job.cached,
    deduplicated: flags.deduplicated ?? false,
    idempotent_replay: flags.idempotent_replay ?? false,
    delivery: renderDelivery(job),
    ...(flags.attempt_sources ? { attempt_sources: flags.attempt_sources } : {}),
  };
}

export type JobResponse = ReturnType<typeof renderJob>;
