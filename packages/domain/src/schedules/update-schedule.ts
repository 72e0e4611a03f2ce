import type { Services, Tenant } from '../context';
import { checkScheduleDestination } from '../destinations/destinations';
import { checkScheduleInput, definitionColumns, type ScheduleInput } from './definition';
import { lockScheduleOrThrow, type ScheduleView, scheduleViewsOf } from './queries';

/**
 * PUT /v1/schedules/{id}: replaces the whole recipe and recurrence and recomputes next_run_at
 * from now. A paused schedule stays paused; a completed one (a once schedule after its run)
 * becomes active again, since its new recurrence has an occurrence to come. Past runs are kept.
 */
export async function updateSchedule(services: Services, tenant: Tenant, scheduleId: string, input: ScheduleInput): Promise<ScheduleView> {
  const now = services.clock.now();
  const def = checkScheduleInput(input, tenant.workspace, services.gate, now);
  const schedule = await services.db.transaction().execute(async (tx) => {
    const current = await lockScheduleOrThrow(tx, tenant, scheduleId);
    await checkScheduleDestination(tx, tenant, def.destinationId);
    return tx
      .updateTable('schedules')
      .set({
        ...definitionColumns(def),
        status: current.status === 'paused' ? 'paused' : 'active',
        updated_at: now,
      })
      .where('id', '=', current.id)
      .returningAll()
      .executeTakeFirstOrThrow();
  });
  return (await scheduleViewsOf(services.db, [schedule]))[0];
}
