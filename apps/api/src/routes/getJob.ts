import type { RequestHandler } from 'express';
import { getJobOrThrow } from '@sdx/domain';
import type { AppDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';
import { jobETag, matchesIfNoneMatch, sendJob } from './job-body';

/**
 * GET /v1/jobs/{job_id} — the result streamed; a large one is a heavy read (bounded per
 * workspace, read on the heavy reads' pool). With an If-None-Match naming the job's ETag: 304,
 * before any result is read or a heavy-read place taken.
 */
export const getJob = ({ services, heavyReads }: AppDeps): RequestHandler => async (req, res) => {
  const tenant = tenantOf(res);
  const job = await getJobOrThrow(services.db, tenant, String(req.params.job_id));
  const etag = jobETag(job);
  res.setHeader('ETag', etag);
  if (matchesIfNoneMatch(req.get('If-None-Match'), etag)) {
    res.status(304).end();
    return;
  }
  const db = job.status === 'completed' ? heavyReads.admit(res, tenant.workspace.id, job.result_count ?? 0, services.db) : services.db;
  await sendJob(res, { ...services, db }, job);
};
