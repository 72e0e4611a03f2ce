import type { Services, Tenant } from '../context';
import { ApiError } from '../errors';
import { lockScheduleOrThrow, type ScheduleView, scheduleViewsOf } from './queries';

/**
 * POST /v1/schedules/{id}/pause: automatic dispatch stops (the scheduler only picks active
 * schedules); next_run_at and history are kept. Pausing a paused schedule changes nothing; a
 * completed schedule cannot be paused (400 invalid_request).
 */
export async function pauseSchedule(services: Services, tenant: Tenant, scheduleId: string): Promise<ScheduleView> {
  const now = services.clock.now();
  const schedule = await services.db.transaction().execute(async (tx) => {
    const current = await lockScheduleOrThrow(tx, tenant, scheduleId);
    if (current.status === 'completed') {
      throw new ApiError('invalid_request', `Schedule ${current.id} has completed its only run; there is nothing to pause.`, {
        schedule_id: current.id,
        status: current.status,
      });
    }
    if (current.status === 'paused') return current;
    return tx
      .updateTable('schedules')
      .set({ status: 'paused', paused_reason: null, updated_at: now })
      .where('id', '=', current.id)
      .returningAll()
      .executeTakeFirstOrThrow();
  });
  return (await scheduleViewsOf(services.db, [schedule]))[0];
}
