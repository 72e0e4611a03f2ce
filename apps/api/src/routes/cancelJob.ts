import { cancelJob as cancel } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { sendJob } from './job-body';
import { route } from './route';

/** POST /v1/jobs/{job_id}/cancel — idempotent; a terminal job comes back unchanged. */
export const cancelJob = route('cancelJob', {
  access: 'member',
  handler: async ({ deps: { services }, req, res }) => {
    const job = await cancel(services, tenantOf(res), String(req.params.job_id));
    await sendJob(res, services, job);
  },
});
