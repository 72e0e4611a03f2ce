import type { Executor, JobRow, JobStatus } from '@sdx/db';
import type { Tenant } from '../resources';
import { ApiError } from '../errors';
import { checkStartingAfter, type Page, pageOf, pageQuery, type PageRequest } from '../paging';

/** Every read is filtered by the tenant's workspace: another workspace's job does not exist. */
export async function findJob(db: Executor, tenant: Tenant, jobId: string): Promise<JobRow | undefined> {
  return db.selectFrom('jobs').selectAll().where('id', '=', jobId).where('workspace_id', '=', tenant.workspace.id).executeTakeFirst();
}

export async function getJobOrThrow(db: Executor, tenant: Tenant, jobId: string): Promise<JobRow> {
  const job = await findJob(db, tenant, jobId);
  if (!job) throw new ApiError('job_not_found', `No job ${jobId} in this workspace.`, { job_id: jobId });
  return job;
}

/**
 * A job of the workspace whose stored result can be read (its export, its items): 404
 * job_not_found, 409 results_not_ready before it has completed, 410 results_expired once the
 * retention purge has deleted its result.
 */
export async function getKeptResultOrThrow(db: Executor, tenant: Tenant, jobId: string): Promise<JobRow> {
  const job = await getJobOrThrow(db, tenant, jobId);
  if (job.status !== 'completed') {
    throw new ApiError('results_not_ready', `Job ${job.id} is ${job.status}; its results can be read once it has completed.`, {
      job_id: job.id,
      status: job.status,
    });
  }
  if (job.result_expired) throw resultsExpired(job);
  return job;
}

export function resultsExpired(job: Pick<JobRow, 'id'>): ApiError {
  return new ApiError('results_expired', `The result of job ${job.id} was deleted after the retention period.`, { job_id: job.id });
}

/** The filters of GET /v1/jobs; they combine. */
export interface JobFilters {
  status?: JobStatus;
  platform?: string;
  operation?: string;
  batchId?: string;
  scheduleId?: string;
}

/**
 * A page of the workspace's jobs, newest first (paging.ts), filtered. Each filter has an index
 * (workspace_id, <filter>, id desc) (migration 0016), so the page is read off it whatever the
 * depth; a batch's children (at most 100) come from the batch index, sorted in memory.
 */
export async function listJobs(db: Executor, tenant: Tenant, page: PageRequest, filters: JobFilters = {}): Promise<Page<JobRow>> {
  await checkStartingAfter(db, tenant, 'jobs', page);
  let query = db.selectFrom('jobs').selectAll();
  if (filters.status !== undefined) query = query.where('status', '=', filters.status);
  if (filters.platform !== undefined) query = query.where('platform', '=', filters.platform);
  if (filters.operation !== undefined) query = query.where('operation', '=', filters.operation);
  if (filters.batchId !== undefined) query = query.where('batch_id', '=', filters.batchId);
  if (filters.scheduleId !== undefined) query = query.where('schedule_id', '=', filters.scheduleId);
  return pageOf(await pageQuery(query, tenant, page).execute(), page.limit);
}

export async function loadJobById(db: Executor, jobId: string): Promise<JobRow | undefined> {
  return db.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirst();
}
