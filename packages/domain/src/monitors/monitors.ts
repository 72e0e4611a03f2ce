import type { MonitorRow } from '@sdx/db';
import { creatorOf } from '../schedules/creator';
import type { Creator } from '../workspaces/creator-revoked';
import type { Services, Tenant } from '../context';
import { checkScheduleDestination } from '../destinations/destinations';
import { newId } from '../ids';
import { checkMonitorInput, monitorColumns, type MonitorInput, type MonitorPatch, nextMonitorRun, patchedInput } from './definition';
import { lockMonitorOrThrow, monitorNotFound } from './queries';

/** Who made a monitor: the same record as a schedule's creator. */
export type MonitorCreator = Creator;

/** POST /v1/monitors: stores the monitor, active, its first run at the recurrence's next occurrence. Reserves nothing. */
export async function createMonitor(services: Services, tenant: Tenant, input: MonitorInput): Promise<MonitorRow> {
  const now = services.clock.now();
  const def = checkMonitorInput(input, tenant.workspace, services.gate);
  await checkScheduleDestination(services.db, tenant, def.destinationId);
  const creator = creatorOf(tenant);
  const columns = monitorColumns(def);
  return services.db
    .insertInto('monitors')
    .values({
      id: newId('mon'),
      workspace_id: tenant.workspace.id,
      ...columns,
      status: 'active',
      paused_reason: null,
      created_by_kind: creator?.kind ?? null,
      created_by_id: creator?.id ?? null,
      next_run_at: nextMonitorRun(
        { frequency: def.frequency, time_of_day: def.timeOfDay, day_of_week: def.dayOfWeek, timezone: def.timezone },
        now,
      ),
      last_run_at: null,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * PATCH /v1/monitors/{id}: the fields given replace the stored ones, and the whole is checked as
 * a create body. next_run_at is recomputed from now when the recurrence changed. A paused
 * monitor stays paused. Past runs, points and changes are kept.
 */
export async function updateMonitor(services: Services, tenant: Tenant, monitorId: string, patch: MonitorPatch): Promise<MonitorRow> {
  const now = services.clock.now();
  return services.db.transaction().execute(async (tx) => {
    const current = await lockMonitorOrThrow(tx, tenant, monitorId);
    const def = checkMonitorInput(patchedInput(current, patch), tenant.workspace, services.gate);
    await checkScheduleDestination(tx, tenant, def.destinationId);
    const recurrence = { frequency: def.frequency, time_of_day: def.timeOfDay, day_of_week: def.dayOfWeek, timezone: def.timezone };
    const recurrenceChanged =
      recurrence.frequency !== current.frequency ||
      recurrence.time_of_day !== current.time_of_day ||
      recurrence.day_of_week !== current.day_of_week ||
      recurrence.timezone !== current.timezone;
    return tx
      .updateTable('monitors')
      .set({
        ...monitorColumns(def),
        next_run_at: recurrenceChanged ? nextMonitorRun(recurrence, now) : current.next_run_at,
        updated_at: now,
      })
      .where('id', '=', current.id)
      .returningAll()
      .executeTakeFirstOrThrow();
  });
}

/** DELETE /v1/monitors/{id}: soft delete. It runs no more and reads as 404 monitor_not_found; its runs' work is kept. */
export async function deleteMonitor(services: Services, tenant: Tenant, monitorId: string): Promise<void> {
  const now = services.clock.now();
  const result = await services.db
    .updateTable('monitors')
    .set({ deleted_at: now, updated_at: now })
    .where('id', '=', monitorId)
    .where('workspace_id', '=', tenant.workspace.id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) throw monitorNotFound(monitorId);
}

/**
 * POST /v1/monitors/{id}/pause: automatic runs stop (paused_reason `user`); a run already under
 * way finishes. Pausing a paused monitor changes nothing (its reason is kept).
 */
export async function pauseMonitor(services: Services, tenant: Tenant, monitorId: string): Promise<MonitorRow> {
  const now = services.clock.now();
  return services.db.transaction().execute(async (tx) => {
    const current = await lockMonitorOrThrow(tx, tenant, monitorId);
    if (current.status === 'paused') return current;
    return tx
      .updateTable('monitors')
      .set({ status: 'paused', paused_reason: 'user', updated_at: now })
      .where('id', '=', current.id)
      .returningAll()
      .executeTakeFirstOrThrow();
  });
}

/**
 * POST /v1/monitors/{id}/resume: automatic runs restart at the first occurrence not in the past
 * (occurrences missed while paused are not run); paused_reason is cleared. Resuming an active
 * monitor changes nothing. A monitor paused because its creator's key was revoked or its creator
 * left resumes under the caller who resumes it: the caller becomes its created_by, so its runs
 * count against a key that can still be used.
 */
export async function resumeMonitor(services: Services, tenant: Tenant, monitorId: string): Promise<MonitorRow> {
  const now = services.clock.now();
  return services.db.transaction().execute(async (tx) => {
    const current = await lockMonitorOrThrow(tx, tenant, monitorId);
    if (current.status === 'active') return current;
    const creator = current.paused_reason === 'creator_revoked' ? creatorOf(tenant) : null;
    return tx
      .updateTable('monitors')
      .set({
        status: 'active',
        paused_reason: null,
        next_run_at: nextMonitorRun(current, now, { inclusive: true }),
        updated_at: now,
        ...(creator ? { created_by_kind: creator.kind, created_by_id: creator.id } : {}),
      })
      .where('id', '=', current.id)
      .returningAll()
      .executeTakeFirstOrThrow();
  });
}

/** Pausing a creator's monitors lives with every other stop of a creator's access (workspaces/creator-revoked.ts). */
export { pauseMonitorsOfCreator } from '../workspaces/creator-revoked';
