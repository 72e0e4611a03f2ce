import type { Services, Tenant } from '../context';
import { checkScheduleDestination } from '../destinations/destinations';
import { newId } from '../ids';
import { checkScheduleInput, definitionColumns, type ScheduleInput } from './definition';
import type { ScheduleView } from './queries';
import { creatorColumns, creatorOf } from './creator';

/**
 * POST /v1/schedules: stores the recipe and recurrence, status active, next_run_at computed, and
 * who made it (created_by: the signed-in user or the calling key). Reserves nothing.
 */
export async function createSchedule(services: Services, tenant: Tenant, input: ScheduleInput): Promise<ScheduleView> {
  const now = services.clock.now();
  const def = checkScheduleInput(input, tenant.workspace, services.gate, now);
  await checkScheduleDestination(services.db, tenant, def.destinationId);
  const schedule = await services.db
    .insertInto('schedules')
    .values({
      id: newId('sch'),
      workspace_id: tenant.workspace.id,
      ...definitionColumns(def),
      last_run_at: null,
      status: 'active',
      ...creatorColumns(creatorOf(tenant)),
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { schedule, runs: [] };
}
