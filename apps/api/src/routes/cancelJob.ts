import type { RequestHandler } from 'express';
import { cancelJob as cancel, loadResult, renderJob } from '@sdx/domain';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** POST /v1/jobs/{job_id}/cancel — idempotent; a terminal job comes back unchanged. */
export const cancelJob = ({ services }: ApiDeps): RequestHandler => async (req, res) => {
  const job = await cancel(services, tenantOf(res), String(req.params.job_id));
  const result = job.status === 'completed' ? await loadResult(services.db, job) : null;
  res.json(renderJob(job, result));
};
