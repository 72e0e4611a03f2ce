import type { Services, Tenant } from '../context';
import { newId } from '../ids';
import { checkScheduleInput, type ScheduleInput } from './definition';
import type { ScheduleView } from './queries';

/** POST /v1/schedules: stores the recipe and recurrence, status active, next_run_at computed. Reserves nothing. */
export async function createSchedule(services: Services, tenant: Tenant, input: ScheduleInput): Promise<ScheduleView> {
  const now = services.clock.now();
  const def = checkScheduleInput(input, tenant.workspace, services.gate, now);
  const schedule = await services.db
    .insertInto('schedules')
    .values({
      id: newId('sch'),
      workspace_id: tenant.workspace.id,
      name: def.name,
      platform: def.platform,
      operation: def.operation,
      targets: JSON.stringify(def.targets),
      requested_limit: def.requestedLimit,
      include_posts: def.includePosts,
      frequency: def.frequency,
      timezone: def.timezone,
      starts_at: def.startsAt,
      starts_at_text: def.startsAtText,
      next_run_at: def.nextRunAt,
      last_run_at: null,
      status: 'active',
      overlap_policy: def.overlapPolicy,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { schedule, runs: [] };
}
