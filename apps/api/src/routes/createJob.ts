import type { RequestHandler } from 'express';
import { createJob as create } from '@sdx/domain';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';
import { sendJob } from './job-body';
import { jobInput, skipCache } from './job-request';

/** POST /v1/jobs — 202 with the queued job (or the replayed, deduplicated or cached one). */
export const createJob = ({ services }: ApiDeps): RequestHandler => async (req, res) => {
  const created = await create(services, tenantOf(res), jobInput(req), {
    endpoint: 'POST /v1/jobs',
    idempotencyKey: req.get('idempotency-key') ?? null,
    requestId: res.locals.requestId as string,
    skipCache: skipCache(req),
  });
  res.setHeader('Location', `/v1/jobs/${created.job.id}`);
  await sendJob(res, services, created.job, { deduplicated: created.deduplicated, idempotent_replay: created.idempotentReplay }, 202);
};
