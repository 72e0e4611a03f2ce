import type { Services, Tenant } from '../context';
import { dispatchScheduleRun, schedulesWithActiveWork } from './dispatch-run';
import { lockScheduleOrThrow, type ScheduleView, scheduleViewsOf } from './queries';
import { insertManualRun } from './runs';

/**
 * POST /v1/schedules/{id}/run: a manual occurrence (trigger manual, scheduled_for now),
 * dispatched at once exactly like an automatic one, overlap policy included. The schedule's
 * status and next_run_at do not change; last_run_at does. The run row is committed before the
 * dispatch, so if this process dies in between, the scheduler's recovery dispatches it.
 */
export async function runScheduleNow(services: Services, tenant: Tenant, scheduleId: string): Promise<ScheduleView> {
  const now = services.clock.now();
  const { schedule, run } = await services.db.transaction().execute(async (tx) => {
    const schedule = await lockScheduleOrThrow(tx, tenant, scheduleId);
    const overlapping = schedule.overlap_policy === 'skip' && (await schedulesWithActiveWork(tx, [schedule.id])).has(schedule.id);
    const run = await insertManualRun(tx, schedule, now, overlapping);
    const updated = await tx
      .updateTable('schedules')
      .set({ last_run_at: now })
      .where('id', '=', schedule.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return { schedule: updated, run };
  });
  if (run.status === 'queued') await dispatchScheduleRun(services, schedule, run, { tenant });
  return (await scheduleViewsOf(services.db, [schedule]))[0];
}
