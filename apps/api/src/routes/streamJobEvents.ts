import { getJobOrThrow } from '@sdx/domain/api';
import { streamGuard } from '../live/guard';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/**
 * GET /v1/jobs/{job_id}/events — Server-Sent Events of the job until its terminal state; 429
 * stream_limit_exceeded past MAX_STREAMS_PER_WORKSPACE open streams; ends when its credential does.
 */
export const streamJobEvents = route('streamJobEvents', {
  access: 'viewer',
  handler: async ({ deps: { services, live }, req, res }) => {
    const job = await getJobOrThrow(services.db, tenantOf(res), String(req.params.job_id));
    await live.stream(req, res, { kind: 'job', id: job.id }, streamGuard(services, req, res));
  },
});
