import type { Services, Tenant } from '../context';
import { scheduleNotFound } from './queries';

/**
 * DELETE /v1/schedules/{id}: soft delete. The schedule stops dispatching and reads as 404
 * schedule_not_found from then on; its runs, jobs, batches and accounting are kept.
 */
export async function deleteSchedule(services: Services, tenant: Tenant, scheduleId: string): Promise<void> {
  const now = services.clock.now();
  const result = await services.db
    .updateTable('schedules')
    .set({ deleted_at: now, updated_at: now })
    .where('id', '=', scheduleId)
    .where('workspace_id', '=', tenant.workspace.id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) throw scheduleNotFound(scheduleId);
}
