import { sql } from 'kysely';
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

/** Active (queued or running) jobs per workspace, as a statement to send with others. */
export function activeJobCounts(db: Executor, workspaceIds: readonly string[]) {
  return sql<{ workspace_id: string; n: number }>`
    select workspace_id, count(*)::int as n
    from jobs
    where workspace_id = any(${[...new Set(workspaceIds)]}::text[]) and status in ('queued', 'running')
    group by workspace_id
  `.compile(db);
}

/**
 * For each (workspace, request key): the queued or running twin, else the latest completed
 * job (not itself a cache hit) finished after `cacheFrom`. A statement to send with others.
 */
export function reusableTwins(db: Executor, requests: ReadonlyArray<{ workspaceId: string; key: string }>, cacheFrom: Date) {
  return sql<JobRow>`
    select j.*
    from unnest(${requests.map((r) => r.workspaceId)}::text[], ${requests.map((r) => r.key)}::text[]) as k(workspace_id, request_key)
    cross join lateral (
      (select * from jobs
        where workspace_id = k.workspace_id and request_key = k.request_key and status in ('queued', 'running')
        limit 1)
      union all
      (select * from jobs
        where workspace_id = k.workspace_id and request_key = k.request_key and status = 'completed' and not cached
          and finished_at > ${cacheFrom}
        order by finished_at desc
        limit 1)
      limit 1
    ) j
  `.compile(db);
}
