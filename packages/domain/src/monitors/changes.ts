import type { Executor, MonitorRow, MonitorRunRow, Tx } from '@sdx/db';
import { newId } from '../ids';
import type { PageRequest } from '../paging';
import type { Tenant } from '../resources';
import { recordRenderedEvents, type RenderedEventCandidate } from '../webhooks/events';
import type { MonitorAlert } from './definition';
import { getMonitorOrThrow, renderMonitorRun } from './queries';

/**
 * What a completed run found changed (extensions-3.md section 3), written in the run's
 * transaction: `metric_changed` for a series whose value differs from its last point,
 * `field_changed` for a profile's text and boolean fields (their last seen values kept per target
 * in monitor_fields), `new_item` for an item the target had not listed in any earlier run (the
 * items seen kept in monitor_items). A target seen for the first time (every target on the
 * monitor's first run, or one added later) records what it has and no changes. Alerts fire from
 * the same comparisons and are written to the webhook outbox as `monitor.alert`.
 */

export const PROFILE_FIELDS = ['display_name', 'bio', 'verified', 'private', 'url'] as const;

export type ChangeKind = 'metric_changed' | 'field_changed' | 'new_item';

/** A value compared with its series' last point. */
export interface Compared {
  target: string;
  itemId: string;
  metric: string;
  value: number;
  /** The series' last point; undefined when the series starts. */
  previous: number | undefined;
}

interface ChangeRow {
  target: string;
  item_id: string | null;
  kind: ChangeKind;
  field: string | null;
  before: unknown;
  after: unknown;
  change_pct: number | null;
}

/** (after − before) / before × 100, null when before is 0. */
export function changePct(before: number, after: number): number | null {
  return before === 0 ? null : ((after - before) / before) * 100;
}

const itemOrNull = (itemId: string) => (itemId === '' ? null : itemId);
const json = (value: unknown) => (value === undefined || value === null ? null : JSON.stringify(value));

/** What each job's items tell beyond the series: the profile's fields, the listed items' IDs. */
export interface TargetItems {
  target: string;
  items: readonly unknown[];
}

/**
 * Records the run's changes and fires its alerts, in the run's transaction. `compared` holds the
 * run's values that differ from their last point (or start a series). Returns the changes written.
 */
export async function recordRunChanges(
  tx: Tx,
  monitor: MonitorRow,
  run: MonitorRunRow,
  compared: readonly Compared[],
  results: readonly TargetItems[],
  at: Date,
): Promise<number> {
  const changes: ChangeRow[] = [];
  for (const c of compared) {
    if (c.previous === undefined) continue;
    changes.push({
      target: c.target,
      item_id: itemOrNull(c.itemId),
      kind: 'metric_changed',
      field: c.metric,
      before: c.previous,
      after: c.value,
      change_pct: changePct(c.previous, c.value),
    });
  }
  const newItems = monitor.operation === 'profile' ? [] : await recordItems(tx, monitor, results);
  for (const item of newItems)
    changes.push({ target: item.target, item_id: item.itemId, kind: 'new_item', field: null, before: null, after: null, change_pct: null });
  if (monitor.operation === 'profile') changes.push(...(await recordFields(tx, monitor, results)));

  for (let i = 0; i < changes.length; i += 1000) {
    await tx
      .insertInto('monitor_changes')
      .values(
        changes.slice(i, i + 1000).map((c) => ({
          id: newId('mch'),
          monitor_id: monitor.id,
          workspace_id: monitor.workspace_id,
          run_id: run.id,
          target: c.target,
          item_id: c.item_id,
          kind: c.kind,
          field: c.field,
          before: json(c.before),
          after: json(c.after),
          change_pct: c.change_pct,
          at,
        })),
      )
      .execute();
  }
  await recordRenderedEvents(tx, at, alertEvents(monitor, run, compared, newItems));
  return changes.length;
}

/** The items listed now that the target had not listed before; the target's first listing tells none. */
async function recordItems(
  tx: Tx,
  monitor: MonitorRow,
  results: readonly TargetItems[],
): Promise<Array<{ target: string; itemId: string; metrics: Record<string, unknown> }>> {
  const listed = new Map<string, { target: string; itemId: string; metrics: Record<string, unknown> }>();
  for (const { target, items } of results) {
    for (const raw of items) {
      const item = raw as { id?: unknown; metrics?: Record<string, unknown> | null };
      if (typeof item.id === 'string') listed.set(`${target}\u0000${item.id}`, { target, itemId: item.id, metrics: item.metrics ?? {} });
    }
  }
  if (listed.size === 0) return [];
  const targets = [...new Set([...listed.values()].map((l) => l.target))];
  const seen = await tx
    .selectFrom('monitor_items')
    .select(['target', 'item_id'])
    .where('monitor_id', '=', monitor.id)
    .where('target', 'in', targets)
    .execute();
  const known = new Set(seen.map((s) => `${s.target}\u0000${s.item_id}`));
  const knownTargets = new Set(seen.map((s) => s.target));
  const fresh = [...listed.entries()].filter(([key]) => !known.has(key)).map(([, l]) => l);
  for (let i = 0; i < fresh.length; i += 1000) {
    await tx
      .insertInto('monitor_items')
      .values(
        fresh
          .slice(i, i + 1000)
          .map((l) => ({ monitor_id: monitor.id, workspace_id: monitor.workspace_id, target: l.target, item_id: l.itemId })),
      )
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
  return fresh.filter((l) => knownTargets.has(l.target));
}

/** The profile fields that differ from the target's last seen ones; the first seen tell none. */
async function recordFields(tx: Tx, monitor: MonitorRow, results: readonly TargetItems[]): Promise<ChangeRow[]> {
  const seenNow: Array<{ target: string; field: string; value: unknown }> = [];
  for (const { target, items } of results) {
    const profile = items[0] as Record<string, unknown> | undefined;
    if (!profile) continue;
    for (const field of PROFILE_FIELDS) seenNow.push({ target, field, value: profile[field] ?? null });
  }
  if (seenNow.length === 0) return [];
  const last = await tx
    .selectFrom('monitor_fields')
    .select(['target', 'field', 'value'])
    .where('monitor_id', '=', monitor.id)
    .where('target', 'in', [...new Set(seenNow.map((s) => s.target))])
    .execute();
  const lastOf = new Map(last.map((row) => [`${row.target}\u0000${row.field}`, row.value ?? null]));
  const out: ChangeRow[] = [];
  const changed: typeof seenNow = [];
  for (const now of seenNow) {
    const key = `${now.target}\u0000${now.field}`;
    if (!lastOf.has(key)) {
      changed.push(now);
      continue;
    }
    const before = lastOf.get(key);
    if (JSON.stringify(before) === JSON.stringify(now.value)) continue;
    changed.push(now);
    out.push({ target: now.target, item_id: null, kind: 'field_changed', field: now.field, before, after: now.value, change_pct: null });
  }
  for (let i = 0; i < changed.length; i += 1000) {
    await tx
      .insertInto('monitor_fields')
      .values(
        changed.slice(i, i + 1000).map((c) => ({
          monitor_id: monitor.id,
          workspace_id: monitor.workspace_id,
          target: c.target,
          field: c.field,
          value: json(c.value),
        })),
      )
      .onConflict((oc) => oc.columns(['monitor_id', 'target', 'field']).doUpdateSet((eb) => ({ value: eb.ref('excluded.value') })))
      .execute();
  }
  return out;
}

/** Whether an alert's condition became true for a value compared with its previous one. */
export function crossed(alert: MonitorAlert, value: number, previous: number | undefined): boolean {
  if (previous === undefined || alert.threshold === undefined) return false;
  switch (alert.condition) {
    case 'above':
      return value > alert.threshold && previous <= alert.threshold;
    case 'below':
      return value < alert.threshold && previous >= alert.threshold;
    case 'change_pct_above':
      return previous !== 0 && (Math.abs(value - previous) / Math.abs(previous)) * 100 >= alert.threshold;
    default:
      return false;
  }
}

/**
 * The run's `monitor.alert` events: once per run, alert and target for a crossing (the first
 * matching series of the target, in the order compared), and once per new item for `new_item`.
 * Each event's subject is run, alert and target (and item), so a run completed twice writes none twice.
 */
function alertEvents(
  monitor: MonitorRow,
  run: MonitorRunRow,
  compared: readonly Compared[],
  newItems: ReadonlyArray<{ target: string; itemId: string; metrics: Record<string, unknown> }>,
): RenderedEventCandidate[] {
  const alerts = monitor.alerts as MonitorAlert[];
  const out: RenderedEventCandidate[] = [];
  alerts.forEach((alert, index) => {
    const applies = (target: string) => alert.target === undefined || alert.target === target;
    const event = (target: string, itemId: string | null, value: number | null, previous: number | null) => ({
      workspaceId: monitor.workspace_id,
      type: 'monitor.alert' as const,
      subjectId: `${run.id}:${index}:${target}${itemId === null ? '' : `:${itemId}`}`,
      data: {
        monitor_id: monitor.id,
        run_id: run.id,
        target,
        item_id: itemId,
        metric: alert.metric,
        value,
        previous,
        condition: alert.condition,
        threshold: alert.threshold ?? null,
      },
    });
    if (alert.condition === 'new_item') {
      for (const item of newItems) {
        if (!applies(item.target)) continue;
        const value = item.metrics[alert.metric];
        out.push(event(item.target, item.itemId, typeof value === 'number' ? value : null, null));
      }
      return;
    }
    const fired = new Set<string>();
    for (const c of compared) {
      if (c.metric !== alert.metric || !applies(c.target) || fired.has(c.target)) continue;
      if (!crossed(alert, c.value, c.previous)) continue;
      fired.add(c.target);
      out.push(event(c.target, itemOrNull(c.itemId), c.value, c.previous ?? null));
    }
  });
  return out;
}

/** `monitor.run.completed`, written with the run's completion. */
export async function recordRunCompleted(tx: Tx, run: MonitorRunRow, at: Date): Promise<void> {
  await recordRenderedEvents(tx, at, [
    { workspaceId: run.workspace_id, type: 'monitor.run.completed', subjectId: run.id, data: renderMonitorRun(run) },
  ]);
}

export interface ChangesQuery {
  target?: string;
  kind?: ChangeKind;
}

/** GET /v1/monitors/{id}/changes: a page of the monitor's changes, newest first. */
export async function listMonitorChanges(db: Executor, tenant: Tenant, monitorId: string, query: ChangesQuery, page: PageRequest) {
  const monitor = await getMonitorOrThrow(db, tenant, monitorId);
  let q = db.selectFrom('monitor_changes').selectAll().where('monitor_id', '=', monitor.id).where('workspace_id', '=', tenant.workspace.id);
  if (query.target !== undefined) {
    const wanted = query.target.trim().toLowerCase();
    q = q.where('target', '=', monitor.targets.find((t) => t.toLowerCase() === wanted) ?? query.target);
  }
  if (query.kind !== undefined) q = q.where('kind', '=', query.kind);
  if (page.startingAfter !== null) q = q.where('id', '<', page.startingAfter);
  const rows = await q
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute();
  return {
    data: rows.slice(0, page.limit).map((row) => ({
      id: row.id,
      run_id: row.run_id,
      target: row.target,
      item_id: row.item_id,
      kind: row.kind,
      field: row.field,
      before: (row.before ?? null) as number | string | boolean | null,
      after: (row.after ?? null) as number | string | boolean | null,
      change_pct: row.change_pct,
      at: row.at.toISOString(),
    })),
    has_more: rows.length > page.limit,
  };
}
