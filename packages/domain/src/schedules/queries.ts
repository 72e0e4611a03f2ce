import { sql } from 'kysely';
import type { Executor, ScheduleRow, ScheduleRunRow, Tx } from '@sdx/db';
import type { Tenant } from '../resources';
import { ApiError } from '../errors';
import { checkStartingAfter, type Page, pageOf, pageQuery, type PageRequest } from '../paging';
import { RECENT_RUNS } from './definition';

/** A schedule with the recent runs its response shows, newest first. */
export interface ScheduleView {
  schedule: ScheduleRow;
  runs: ScheduleRunRow[];
}

/** Every read is filtered by the tenant's workspace; a deleted schedule does not exist. */
export async function findSchedule(db: Executor, tenant: Tenant, scheduleId: string): Promise<ScheduleRow | undefined> {
  return db
    .selectFrom('schedules')
    .selectAll()
    .where('id', '=', scheduleId)
    .where('workspace_id', '=', tenant.workspace.id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export function scheduleNotFound(scheduleId: string): ApiError {
  return new ApiError('schedule_not_found', `No schedule ${scheduleId} in this workspace.`, { schedule_id: scheduleId });
}

export async function getScheduleOrThrow(db: Executor, tenant: Tenant, scheduleId: string): Promise<ScheduleRow> {
  const schedule = await findSchedule(db, tenant, scheduleId);
  if (!schedule) throw scheduleNotFound(scheduleId);
  return schedule;
}

/** The schedule, locked for the rest of the transaction; 404 schedule_not_found otherwise. */
export async function lockScheduleOrThrow(tx: Tx, tenant: Tenant, scheduleId: string): Promise<ScheduleRow> {
  const schedule = await tx
    .selectFrom('schedules')
    .selectAll()
    .where('id', '=', scheduleId)
    .where('workspace_id', '=', tenant.workspace.id)
    .where('deleted_at', 'is', null)
    .forUpdate()
    .executeTakeFirst();
  if (!schedule) throw scheduleNotFound(scheduleId);
  return schedule;
}

/** The latest `perSchedule` runs of each schedule, newest first, in one query. */
export async function recentRuns(db: Executor, scheduleIds: string[], perSchedule = RECENT_RUNS): Promise<Map<string, ScheduleRunRow[]>> {
  const out = new Map<string, ScheduleRunRow[]>(scheduleIds.map((id) => [id, []]));
  if (scheduleIds.length === 0) return out;
  const rows = await db
    .selectFrom((eb) =>
      eb
        .selectFrom('schedule_runs')
        .selectAll()
        .select(sql<number>`row_number() over (partition by schedule_id order by created_at desc, id desc)`.as('rn'))
        .where('schedule_id', 'in', scheduleIds)
        .as('r'),
    )
    .selectAll()
    .where('rn', '<=', perSchedule)
    .orderBy('schedule_id')
    .orderBy('rn')
    .execute();
  for (const { rn: _rn, ...run } of rows) out.get(run.schedule_id)?.push(run);
  return out;
}

export async function scheduleViewsOf(db: Executor, schedules: ScheduleRow[]): Promise<ScheduleView[]> {
  const runs = await recentRuns(
    db,
    schedules.map((s) => s.id),
  );
  return schedules.map((schedule) => ({ schedule, runs: runs.get(schedule.id) ?? [] }));
}

/** GET /v1/schedules/{id}. */
export async function getScheduleView(db: Executor, tenant: Tenant, scheduleId: string): Promise<ScheduleView> {
  const schedule = await getScheduleOrThrow(db, tenant, scheduleId);
  return (await scheduleViewsOf(db, [schedule]))[0];
}

/**
 * GET /v1/schedules: a page of the schedules that are not deleted, newest first (paging.ts),
 * each with its recent runs. A schedule deleted since the last page still marks its place.
 */
export async function listScheduleViews(db: Executor, tenant: Tenant, page: PageRequest): Promise<Page<ScheduleView>> {
  await checkStartingAfter(db, tenant, 'schedules', page);
  const query = db.selectFrom('schedules').selectAll().where('deleted_at', 'is', null);
  const schedules = pageOf(await pageQuery(query, tenant, page).execute(), page.limit);
  return { rows: await scheduleViewsOf(db, schedules.rows), next: schedules.next };
}
