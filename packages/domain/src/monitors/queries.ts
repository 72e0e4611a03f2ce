import type { Executor, MonitorRow, MonitorRunRow, Tx } from '@sdx/db';
import { ApiError } from '../errors';
import { checkStartingAfter, type Page, pageOf, pageQuery, type PageRequest } from '../paging';
import type { Tenant } from '../resources';
import { creditsPerRun, type MonitorAlert, RUNS_PER_MONTH } from './definition';

export function monitorNotFound(monitorId: string): ApiError {
  return new ApiError('monitor_not_found', `No monitor ${monitorId} in this workspace.`, { monitor_id: monitorId });
}

/** Every read is filtered by the tenant's workspace; a deleted monitor does not exist. */
export async function getMonitorOrThrow(db: Executor, tenant: Tenant, monitorId: string): Promise<MonitorRow> {
  const monitor = await db
    .selectFrom('monitors')
    .selectAll()
    .where('id', '=', monitorId)
    .where('workspace_id', '=', tenant.workspace.id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!monitor) throw monitorNotFound(monitorId);
  return monitor;
}

/** The monitor, locked for the rest of the transaction; 404 monitor_not_found otherwise. */
export async function lockMonitorOrThrow(tx: Tx, tenant: Tenant, monitorId: string): Promise<MonitorRow> {
  const monitor = await tx
    .selectFrom('monitors')
    .selectAll()
    .where('id', '=', monitorId)
    .where('workspace_id', '=', tenant.workspace.id)
    .where('deleted_at', 'is', null)
    .forUpdate()
    .executeTakeFirst();
  if (!monitor) throw monitorNotFound(monitorId);
  return monitor;
}

/** GET /v1/monitors: a page of the monitors that are not deleted, newest first (paging.ts). */
export async function listMonitors(db: Executor, tenant: Tenant, page: PageRequest): Promise<Page<MonitorRow>> {
  await checkStartingAfter(db, tenant, 'monitors', page);
  return pageOf(await pageQuery(db.selectFrom('monitors').selectAll().where('deleted_at', 'is', null), tenant, page).execute(), page.limit);
}

/** GET /v1/monitors/{id}/runs: a page of the monitor's runs, newest first. */
export async function listMonitorRuns(
  db: Executor,
  tenant: Tenant,
  monitorId: string,
  page: PageRequest,
): Promise<{ rows: MonitorRunRow[]; hasMore: boolean }> {
  await getMonitorOrThrow(db, tenant, monitorId);
  let query = db.selectFrom('monitor_runs').selectAll().where('monitor_id', '=', monitorId).where('workspace_id', '=', tenant.workspace.id);
  if (page.startingAfter !== null) query = query.where('id', '<', page.startingAfter);
  const rows = await query
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute();
  return { rows: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
}

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

/** A monitor as the API shows it (Monitor of openapi.yaml). */
export function renderMonitor(monitor: MonitorRow) {
  const perRun = creditsPerRun(monitor);
  return {
    id: monitor.id,
    name: monitor.name,
    platform: monitor.platform,
    operation: monitor.operation,
    targets: monitor.targets,
    limit: monitor.requested_limit,
    frequency: monitor.frequency,
    time_of_day: monitor.time_of_day,
    day_of_week: monitor.day_of_week as 'monday' | 'tuesday' | 'wednesday' | 'thursday' | 'friday' | 'saturday' | 'sunday' | null,
    timezone: monitor.timezone,
    status: monitor.status,
    paused_reason: monitor.paused_reason as 'user' | 'creator_revoked' | null,
    alerts: monitor.alerts as MonitorAlert[],
    created_by:
      monitor.created_by_kind === null || monitor.created_by_id === null
        ? null
        : { kind: monitor.created_by_kind, id: monitor.created_by_id },
    next_run_at: monitor.status === 'active' ? iso(monitor.next_run_at) : null,
    last_run_at: iso(monitor.last_run_at),
    estimated_credits_per_run: perRun,
    estimated_credits_per_month: perRun * RUNS_PER_MONTH[monitor.frequency],
    created_at: monitor.created_at.toISOString(),
  };
}

/** A run as the API shows it (MonitorRun of openapi.yaml). */
export function renderMonitorRun(run: MonitorRunRow) {
  return {
    id: run.id,
    monitor_id: run.monitor_id,
    trigger: run.trigger,
    status: run.status,
    batch_ids: run.batch_ids,
    scheduled_for: run.scheduled_for.toISOString(),
    started_at: iso(run.started_at),
    finished_at: iso(run.finished_at),
    observations: run.observations,
    changes: run.changes,
    error: (run.error ?? null) as { error: string; message: string; [k: string]: unknown } | null,
  };
}
