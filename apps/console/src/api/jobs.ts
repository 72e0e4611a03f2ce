import type { operations } from '@sdx/contract';
import { api, type Job, unwrapPage } from './client';

/** The filters and cursor of GET /v1/jobs (extensions.md 7). */
export type JobFilters = NonNullable<operations['listJobs']['parameters']['query']>;

/** One page of GET /v1/jobs, with the cursor of the next page (from its Link header). */
export function listJobs(filters: JobFilters): Promise<{ items: Job[]; next: string | null }> {
  return unwrapPage(api.GET('/v1/jobs', { params: { query: filters } }));
}

export const ACTIVE = 'queued,running';
export const JOB_STATUSES = ['queued', 'running', 'completed', 'failed', 'cancelled'] as const;
export const isTerminal = (status: string) => status === 'completed' || status === 'failed' || status === 'cancelled';
