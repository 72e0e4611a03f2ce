import { nextOccurrence } from '@sdx/recurrence';
import type { Services, Tenant } from '../context';
import { ApiError } from '../errors';
import { recurrenceOf } from './definition';
import { lockScheduleOrThrow, type ScheduleView, scheduleViewsOf } from './queries';

/**
 * POST /v1/schedules/{id}/resume: automatic dispatch restarts. next_run_at moves to the first
 * occurrence that is not in the past, so occurrences missed while paused are not run. Resuming
 * an active schedule changes nothing. A completed schedule, or a once schedule whose only
 * occurrence passed while it was paused, cannot be resumed (400 invalid_request): replace its
 * starts_at with PUT instead.
 */
export async function resumeSchedule(services: Services, tenant: Tenant, scheduleId: string): Promise<ScheduleView> {
  const now = services.clock.now();
  const schedule = await services.db.transaction().execute(async (tx) => {
    const current = await lockScheduleOrThrow(tx, tenant, scheduleId);
    if (current.status === 'active') return current;
    const nextRunAt =
      current.status === 'paused' && current.next_run_at && current.next_run_at.getTime() >= now.getTime()
        ? current.next_run_at
        : current.status === 'paused'
          ? nextOccurrence(recurrenceOf(current), now, { inclusive: true })
          : null;
    if (nextRunAt === null) {
      throw new ApiError(
        'invalid_request',
        current.status === 'completed'
          ? `Schedule ${current.id} has completed its only run; it cannot be resumed.`
          : `The only occurrence of schedule ${current.id} has passed; set a new starts_at with PUT to run it again.`,
        { schedule_id: current.id, status: current.status },
      );
    }
    return tx
      .updateTable('schedules')
      .set({ status: 'active', next_run_at: nextRunAt, updated_at: now })
      .where('id', '=', current.id)
      .returningAll()
      .executeTakeFirstOrThrow();
  });
  return (await scheduleViewsOf(services.db, [schedule]))[0]!;
}
