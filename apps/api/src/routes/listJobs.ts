import type { RequestHandler } from 'express';
import { listJobs as list } from '@sdx/domain';
import type { AppDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';
import { sendJobs } from './job-body';

/** GET /v1/jobs — latest first, each result streamed; large results together are a heavy read. */
export const listJobs = ({ services, heavyReads }: AppDeps): RequestHandler => async (req, res) => {
  const tenant = tenantOf(res);
  const limit = Number(req.query.limit ?? 25);
  const jobs = await list(services.db, tenant, limit);
  heavyReads.admit(res, tenant.workspace.id, jobs.reduce((n, job) => n + (job.status === 'completed' ? (job.result_count ?? 0) : 0), 0));
  await sendJobs(res, services, jobs);
};
