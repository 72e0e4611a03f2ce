import type { RequestHandler } from 'express';
import { getJobOrThrow } from '@sdx/domain';
import type { AppDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';
import { sendJob } from './job-body';

/** GET /v1/jobs/{job_id} — the result streamed; a large one is a heavy read (bounded per workspace). */
export const getJob = ({ services, heavyReads }: AppDeps): RequestHandler => async (req, res) => {
  const tenant = tenantOf(res);
  const job = await getJobOrThrow(services.db, tenant, String(req.params.job_id));
  if (job.status === 'completed') heavyReads.admit(res, tenant.workspace.id, job.result_count ?? 0);
  await sendJob(res, services, job);
};
