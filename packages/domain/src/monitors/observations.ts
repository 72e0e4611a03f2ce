import { sql } from 'kysely';
import type { Db, Executor, MonitorRow, MonitorRunRow, Tx } from '@sdx/db';
import { RequestValidationError } from '../errors';
import { resultsOf } from '../jobs/results';
import type { Resources, Tenant } from '../resources';
import { recordRunChanges, type Compared, type TargetItems } from './changes';
import { ITEM_METRICS, PROFILE_METRICS } from './definition';
import { getMonitorOrThrow } from './queries';

/**
 * A run's observations (extensions-3.md section 3): for a profile operation, each numeric count
 * of the profile per target; for a list operation, each returned item's metrics per item. A
 * series gains a point only when its value differs from its last point (always on its first);
 * a null value is no point. The last point of each series is kept in monitor_series, so a run
 * compares against one row per series and never reads the points themselves.
 */

export interface Observation {
  target: string;
  /** '' for a profile's series. */
  itemId: string;
  metric: string;
  value: number;
}

/** The observations of one target's result items. */
export function observationsOf(operation: string, target: string, items: readonly unknown[]): Observation[] {
  const out: Observation[] = [];
  if (operation === 'profile') {
    const profile = items[0] as Record<string, unknown> | undefined;
    if (!profile) return out;
    for (const metric of PROFILE_METRICS) {
      const value = profile[metric];
      if (typeof value === 'number' && Number.isFinite(value)) out.push({ target, itemId: '', metric, value });
    }
    return out;
  }
  for (const raw of items) {
    const item = raw as { id?: unknown; metrics?: Record<string, unknown> | null };
    if (typeof item.id !== 'string' || !item.metrics) continue;
    for (const metric of ITEM_METRICS) {
      const value = item.metrics[metric];
      if (typeof value === 'number' && Number.isFinite(value)) out.push({ target, itemId: item.id, metric, value });
    }
  }
  return out;
}

const monthStart = (at: Date) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));

/** Months whose partition this process has made sure of. */
const ensured = new Set<string>();

/**
 * The month's partition of monitor_points, created if missing (monitor_points_YYYY_MM, from the
 * first of the month UTC to the next). Its own statement, outside any run's transaction: two
 * processes racing to create it leave one, and the loser's duplicate error is ignored.
 */
export async function ensureMonthPartition(db: Db, at: Date): Promise<void> {
  const from = monthStart(at);
  const name = `monitor_points_${from.getUTCFullYear()}_${String(from.getUTCMonth() + 1).padStart(2, '0')}`;
  if (ensured.has(name)) return;
  const to = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth() + 1, 1));
  try {
    await sql`create table if not exists ${sql.table(name)} partition of monitor_points for values from (${sql.lit(from.toISOString())}) to (${sql.lit(to.toISOString())})`.execute(
      db,
    );
  } catch (error) {
    const code = (error as { code?: string }).code;
    // 42P07: made meanwhile by another process; 42P17/23514: overlapping (made by another name).
    if (code !== '42P07' && code !== '42P17' && code !== '23514') throw error;
  }
  ensured.add(name);
}

/**
 * Records a completed run's observations in the run's transaction: reads each ended job's
 * result, keeps the values that differ from their series' last point (or start a series), writes
 * them as points and as their series' new last points, and records the run's changes and alerts
 * (changes.ts). Returns the points added and the changes recorded.
 */
export async function recordRunObservations(
  services: Pick<Resources, 'db' | 'resultObjects'>,
  tx: Tx,
  monitor: MonitorRow,
  run: MonitorRunRow,
  batchIds: readonly string[],
  at: Date,
): Promise<{ observations: number; changes: number }> {
  if (batchIds.length === 0) return { observations: 0, changes: 0 };
  const jobs = await tx
    .selectFrom('jobs')
    .select(['id', 'source_job_id', 'target'])
    .where('batch_id', 'in', [...batchIds])
    .where('status', '=', 'completed')
    .execute();
  const observed: Observation[] = [];
  const results: TargetItems[] = [];
  const read = await resultsOf({ db: tx, resultObjects: services.resultObjects }, jobs);
  for (const job of jobs) {
    const items = read.get(job.id)!;
    for (const o of observationsOf(monitor.operation, job.target, items)) observed.push(o);
    results.push({ target: job.target, items });
  }
  if (observed.length === 0) return { observations: 0, changes: await recordRunChanges(tx, monitor, run, [], results, at) };
  const targets = [...new Set(observed.map((o) => o.target))];
  const last = await tx
    .selectFrom('monitor_series')
    .select(['target', 'item_id', 'metric', 'value'])
    .where('monitor_id', '=', monitor.id)
    .where('target', 'in', targets)
    .execute();
  const key = (target: string, itemId: string, metric: string) => `${target}\u0000${itemId}\u0000${metric}`;
  const previous = new Map(last.map((row) => [key(row.target, row.item_id, row.metric), row.value]));
  const points = observed.filter((o) => previous.get(key(o.target, o.itemId, o.metric)) !== o.value);
  const compared: Compared[] = points.map((p) => ({ ...p, previous: previous.get(key(p.target, p.itemId, p.metric)) }));
  const changes = await recordRunChanges(tx, monitor, run, compared, results, at);
  if (points.length === 0) return { observations: 0, changes };
  await ensureMonthPartition(services.db, at);
  for (let i = 0; i < points.length; i += 1000) {
    const slice = points.slice(i, i + 1000);
    await tx
      .insertInto('monitor_points')
      .values(
        slice.map((p) => ({
          monitor_id: monitor.id,
          workspace_id: monitor.workspace_id,
          target: p.target,
          item_id: p.itemId,
          metric: p.metric,
          at,
          value: p.value,
          run_id: run.id,
        })),
      )
      .execute();
    await tx
      .insertInto('monitor_series')
      .values(
        slice.map((p) => ({
          monitor_id: monitor.id,
          workspace_id: monitor.workspace_id,
          target: p.target,
          item_id: p.itemId,
          metric: p.metric,
          value: p.value,
          at,
        })),
      )
      .onConflict((oc) =>
        oc
          .columns(['monitor_id', 'target', 'item_id', 'metric'])
          .doUpdateSet((eb) => ({ value: eb.ref('excluded.value'), at: eb.ref('excluded.at') })),
      )
      .execute();
  }
  return { observations: points.length, changes };
}

export interface SeriesQuery {
  target?: string;
  metric?: string;
  itemId?: string;
  from?: Date;
  to?: Date;
}

export interface Series {
  target: string;
  item_id: string | null;
  metric: string;
  points: Array<{ at: string; value: number }>;
}

/** The most points one series answer holds; a longer range answers 422 asking for a narrower one. */
export const MAX_SERIES_POINTS = 100_000;

/** The points query of a series answer: the monitor's points matching the filters (the monitor read and checked first). */
async function seriesPoints(db: Executor, tenant: Tenant, monitorId: string, query: SeriesQuery) {
  const monitor = await getMonitorOrThrow(db, tenant, monitorId);
  if (query.from && query.to && query.from.getTime() > query.to.getTime()) {
    throw new RequestValidationError([
      { loc: ['query', 'from'], msg: 'from must not be after to', type: 'value_error', input: query.from.toISOString() },
    ]);
  }
  let q = db.selectFrom('monitor_points').where('monitor_id', '=', monitor.id).where('workspace_id', '=', tenant.workspace.id);
  if (query.target !== undefined) {
    const wanted = query.target.trim().toLowerCase();
    const target = monitor.targets.find((t) => t.toLowerCase() === wanted) ?? query.target;
    q = q.where('target', '=', target);
  }
  if (query.metric !== undefined) q = q.where('metric', '=', query.metric);
  if (query.itemId !== undefined) q = q.where('item_id', '=', query.itemId);
  if (query.from) q = q.where('at', '>=', query.from);
  if (query.to) q = q.where('at', '<=', query.to);
  // The order of monitor_points_series_idx (workspace_id, monitor_id, target, metric, item_id, at,
  // value included): an index-only scan in index order, not sorted.
  return q
    .orderBy('target')
    .orderBy('metric')
    .orderBy('item_id')
    .orderBy('at')
    .limit(MAX_SERIES_POINTS + 1);
}

function tooManyPoints(): RequestValidationError {
  return new RequestValidationError([
    {
      loc: ['query'],
      msg: `More than ${MAX_SERIES_POINTS} points match; narrow the answer with target, metric, item_id, from or to`,
      type: 'value_error',
    },
  ]);
}

/** GET /v1/monitors/{id}/series: the monitor's series matching the filters, each with its points oldest first. */
export async function readSeries(db: Executor, tenant: Tenant, monitorId: string, query: SeriesQuery): Promise<Series[]> {
  const rows = await (await seriesPoints(db, tenant, monitorId, query)).select(['target', 'item_id', 'metric', 'at', 'value']).execute();
  if (rows.length > MAX_SERIES_POINTS) throw tooManyPoints();
  const out: Series[] = [];
  let current: Series | null = null;
  for (const row of rows) {
    const itemId = row.item_id === '' ? null : row.item_id;
    if (!current || current.target !== row.target || current.metric !== row.metric || current.item_id !== itemId) {
      current = { target: row.target, item_id: itemId, metric: row.metric, points: [] };
      out.push(current);
    }
    current.points.push({ at: row.at.toISOString(), value: row.value });
  }
  return out;
}

const DAY_MS = 86_400_000;
const TWO_DIGITS = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
const THREE_DIGITS = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));

/**
 * The points of "ms,value,ms,value…" as JSON objects, comma-separated: `at` as toISOString
 * writes it, its date part made once a day (a series' points are in time order) and its time
 * from tables, twice as fast as a Date per point.
 */
function pointsJson(text: string): string {
  const fields = text.split(',');
  const out = new Array<string>(fields.length / 2);
  let day = Number.NaN;
  let date = '';
  for (let i = 0; i < fields.length; i += 2) {
    const t = Number(fields[i]);
    const d = Math.floor(t / DAY_MS);
    if (d !== day) {
      day = d;
      const iso = new Date(d * DAY_MS).toISOString();
      date = iso.slice(0, iso.indexOf('T') + 1);
    }
    const r = t - d * DAY_MS;
    const time = `${TWO_DIGITS[Math.floor(r / 3_600_000)]}:${TWO_DIGITS[Math.floor(r / 60_000) % 60]}:${TWO_DIGITS[Math.floor(r / 1000) % 60]}.${THREE_DIGITS[r % 1000]}`;
    out[i / 2] = `{"at":"${date}${time}Z","value":${fields[i + 1]}}`;
  }
  return out.join(',');
}

/** A series' JSON up to its points' opening bracket. */
function seriesHead(target: string, itemId: string, metric: string): string {
  return `{"target":${JSON.stringify(target)},"item_id":${itemId === '' ? 'null' : JSON.stringify(itemId)},"metric":${JSON.stringify(metric)},"points":[`;
}

/**
 * readSeries' answer as JSON text (the array of series), in readSeries' order, each point as
 * {"at", "value"} (at as toISOString writes it). Postgres sends each series as one row whose
 * points are one text, "ms,value,ms,value…" (the instant in epoch milliseconds; a finite
 * float8's text is a JSON number and has no comma), and the text is cut and joined here: a year
 * of points is neither parsed into row objects nor serialised again, and no instant is formatted
 * in SQL (to_char per point cost as much as the rest of the query).
 */
export async function readSeriesJson(db: Executor, tenant: Tenant, monitorId: string, query: SeriesQuery): Promise<string> {
  const points = (await seriesPoints(db, tenant, monitorId, query)).select(['target', 'item_id', 'metric', 'at', 'value']);
  const { rows } = await sql<{ target: string; item_id: string; metric: string; n: number; points: string }>`
    select target, item_id, metric, count(*)::int as n,
           string_agg(floor(extract(epoch from at) * 1000)::bigint::text || ',' || value::text, ',' order by at) as points
    from (${points}) p
    group by target, metric, item_id
    order by target, metric, item_id
  `.execute(db);
  if (rows.reduce((sum, row) => sum + row.n, 0) > MAX_SERIES_POINTS) throw tooManyPoints();
  const series: string[] = [];
  for (const row of rows) series.push(`${seriesHead(row.target, row.item_id, row.metric)}${pointsJson(row.points)}]}`);
  return `[${series.join(',')}]`;
}
