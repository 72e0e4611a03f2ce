import type { Executor, JobRow } from '@sdx/db';
import type { Tenant } from '../context';
import { ApiError } from '../errors';

/** Every read is filtered by the tenant's workspace: another workspace's job does not exist. */
export async function findJob(db: Executor, tenant: Tenant, jobId: string): Promise<JobRow | undefined> {
  return db.selectFrom('jobs').selectAll().where('id', '=', jobId).where('workspace_id', '=', tenant.workspace.id).executeTakeFirst();
}

export async function getJobOrThrow(db: Executor, tenant: Tenant, jobId: string): Promise<JobRow> {
  const job = await findJob(db, tenant, jobId);
  if (!job) throw new ApiError('job_not_found', `No job ${jobId} in this workspace.`, { job_id: jobId });
  return job;
}

/** Latest first. */
export async function listJobs(db: Executor, tenant: Tenant, limit: number): Promise<JobRow[]> {
  return db.selectFrom('jobs').selectAll().where('workspace_id', '=', tenant.workspace.id).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

export async function loadJobById(db: Executor, jobId: string): Promise<JobRow | undefined> {
  return db.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirst();
}
