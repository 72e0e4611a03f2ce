import { type JobFilters, listJobs as list } from '@sdx/domain/api';
import type { JobStatus } from '@sdx/db';
import { tenantOf } from '../middleware/tenant';
import { sendJobs } from './job-body';
import { pageRequestOf, setNextLink } from './paging';
import { route } from './route';

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/**
 * GET /v1/jobs — a page, newest first, filtered; `Link` to the next page. Each result is streamed
 * (include_result=false: none); large results together are a heavy read.
 */
export const listJobs = route('listJobs', {
  access: 'viewer',
  handler: async ({ deps: { services, heavyReads }, req, res, query }) => {
    const tenant = tenantOf(res);
    const withResult = query.include_result ?? true;
    const filters: JobFilters = {
      status: text(req.query.status) as JobStatus | undefined,
      platform: text(req.query.platform),
      operation: text(req.query.operation),
      batchId: text(req.query.batch_id),
      scheduleId: text(req.query.schedule_id),
    };
    const page = await list(services.db, tenant, pageRequestOf(req, 25), filters);
    const items = withResult
      ? page.rows.reduce((n, job) => n + (job.status === 'completed' && !job.result_expired ? (job.result_count ?? 0) : 0), 0)
      : 0;
    const db = heavyReads.admit(res, tenant.workspace.id, items, services.db);
    setNextLink(req, res, page.next);
    await sendJobs(res, { ...services, db }, page.rows, withResult);
  },
});
