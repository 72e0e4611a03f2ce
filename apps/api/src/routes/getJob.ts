import type { RequestHandler } from 'express';
import { getJobOrThrow, loadResult, renderJob } from '@sdx/domain';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** GET /v1/jobs/{job_id} */
export const getJob = ({ services }: ApiDeps): RequestHandler => async (req, res) => {
  const job = await getJobOrThrow(services.db, tenantOf(res), String(req.params.job_id));
  const result = job.status === 'completed' ? await loadResult(services.db, job) : null;
  res.json(renderJob(job, result));
};
