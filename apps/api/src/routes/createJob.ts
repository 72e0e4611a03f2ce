import type { RequestHandler } from 'express';
import { createJob as create, loadResult, renderJob } from '@sdx/domain';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';
import { jobInput, skipCache } from './job-request';

/** POST /v1/jobs — 202 with the queued job (or the replayed, deduplicated or cached one). */
export const createJob = ({ services }: ApiDeps): RequestHandler => async (req, res) => {
  const created = await create(services, tenantOf(res), jobInput(req), {
    endpoint: 'POST /v1/jobs',
    idempotencyKey: req.get('idempotency-key') ?? null,
    requestId: res.locals.requestId as string,
    skipCache: skipCache(req),
  });
  const result = created.job.status === 'completed' ? await loadResult(services.db, created.job) : null;
  res.status(202).json(renderJob(created.job, result, { deduplicated: created.deduplicated, idempotent_replay: created.idempotentReplay }));
};
