import { attemptSourcesOf, getJobOrThrow } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { jobETag, matchesIfNoneMatch, sendJob } from './job-body';
import { route } from './route';

/**
 * GET /v1/jobs/{job_id} — the result streamed; a large one is a heavy read (bounded per
 * workspace, read on the heavy reads' pool). With an If-None-Match naming the job's ETag: 304,
 * before any result is read or a heavy-read place taken. With include_result=false: the job with
 * `result` null (its own ETag), nothing read, never a heavy read — what a poller needs.
 */
export const getJob = route('getJob', {
  access: 'viewer',
  handler: async ({ deps: { services, heavyReads, registry }, req, res, query }) => {
    const tenant = tenantOf(res);
    const job = await getJobOrThrow(services.db, tenant, String(req.params.job_id));
    const withResult = query.include_result ?? true;
    const etag = jobETag(job, withResult);
    res.setHeader('ETag', etag);
    if (matchesIfNoneMatch(req.get('If-None-Match'), etag)) {
      res.status(304).end();
      return;
    }
    // The sources live attempts tried: read only where a live source serves the operation (none
    // before the first attempt, and the sandbox records none, so its jobs cost no read).
    const live = job.attempts > 0 && (registry.resolve(job.platform, job.operation)?.sources?.length ?? 0) > 0;
    const attempt_sources = live ? await attemptSourcesOf(services.db, job.id) : [];
    // Shown once a live source was tried; a sandbox job answers alike from every endpoint.
    const flags = attempt_sources.length > 0 ? { attempt_sources } : {};
    const db =
      job.status === 'completed' && withResult
        ? heavyReads.admit(res, tenant.workspace.id, job.result_count ?? 0, services.db)
        : services.db;
    await sendJob(res, { ...services, db }, job, flags, 200, withResult);
  },
});
