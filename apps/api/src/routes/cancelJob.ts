import type { RequestHandler } from 'express';
import { cancelJob as cancel } from '@sdx/domain/api';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';
import { sendJob } from './job-body';

/** POST /v1/jobs/{job_id}/cancel — idempotent; a terminal job comes back unchanged. */
export const cancelJob = ({ services }: ApiDeps): RequestHandler => async (req, res) => {
  const job = await cancel(services, tenantOf(res), String(req.params.job_id));
  await sendJob(res, services, job);
};
