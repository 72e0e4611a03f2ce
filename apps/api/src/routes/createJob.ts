import { createJob as create } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { sendJob } from './job-body';
import { jobRequest } from './job-request';
import { route } from './route';

/** POST /v1/jobs — 202 with the queued job (or the replayed, deduplicated or cached one). */
export const createJob = route('createJob', {
  access: 'member',
  handler: async ({ deps: { services }, req, res }, body) => {
    const { input, options } = jobRequest(req, res, body, 'POST /v1/jobs');
    const created = await create(services, tenantOf(res), input, options);
    res.setHeader('Location', `/v1/jobs/${created.job.id}`);
    await sendJob(res, services, created.job, { deduplicated: created.deduplicated, idempotent_replay: created.idempotentReplay }, 202);
  },
});
