import { api, ApiProblem, type Job, unwrapPage } from './client';
import type { JobFilters } from './pending';

const FILTER_KEYS = ['status', 'platform', 'operation', 'batch_id', 'schedule_id', 'include_result', 'starting_after'] as const;

/**
 * GET /v1/jobs with the filters and cursor of extensions.md 7. A service that does not know
 * those query parameters yet answers 422 naming them; the list is then read without them and
 * filtered here, so the console works against both.
 */
export async function listJobs(filters: JobFilters): Promise<{ items: Job[]; next: string | null }> {
  try {
    return await unwrapPage(api.GET('/v1/jobs', { params: { query: filters } }));
  } catch (error) {
    const unknownQuery = error instanceof ApiProblem && error.status === 422 && error.issues.some((i) => (FILTER_KEYS as readonly string[]).includes(i.field));
    if (!unknownQuery) throw error;
    const page = await unwrapPage(api.GET('/v1/jobs', { params: { query: { limit: 100 } } }));
    const keep = (job: Job) =>
      (!filters.status || filters.status.split(',').includes(job.status)) &&
      (!filters.platform || job.platform === filters.platform) &&
      (!filters.operation || job.operation === filters.operation);
    return { items: page.items.filter(keep).slice(0, filters.limit ?? 25), next: null };
  }
}

export const ACTIVE = 'queued,running';
export const JOB_STATUSES = ['queued', 'running', 'completed', 'failed', 'cancelled'] as const;
export const isTerminal = (status: string) => status === 'completed' || status === 'failed' || status === 'cancelled';
