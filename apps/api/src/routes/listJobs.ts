import type { RequestHandler } from 'express';
import { listJobs as list, loadResults, renderJob } from '@sdx/domain';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** GET /v1/jobs — latest first. */
export const listJobs = ({ services }: ApiDeps): RequestHandler => async (req, res) => {
  const limit = Number(req.query.limit ?? 25);
  const jobs = await list(services.db, tenantOf(res), limit);
  const results = await loadResults(services.db, jobs);
  res.json(jobs.map((job) => renderJob(job, results.get(job.id) ?? null)));
};
