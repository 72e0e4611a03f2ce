import type { operations } from '@sdx/contract';
import { api, ApiProblem, type Schemas, sessionHeaders, unwrap } from './client';

/**
 * A monitor's series and changes (spec extensions-3 §3). The changes are read with fetch and
 * the session's headers, in the spec's shape; everything else goes through the typed client.
 */
export type Monitor = Schemas['Monitor'];
export type MonitorRun = Schemas['MonitorRun'];
export type MonitorAlert = Schemas['MonitorAlert'];

export type Series = Schemas['MonitorSeries'];
export type SeriesPoint = Series['points'][number];
type SeriesFilters = NonNullable<operations['getMonitorSeries']['parameters']['query']>;
export interface MonitorChange {
  id: string;
  run_id: string;
  target: string;
  item_id: string | null;
  kind: 'metric_changed' | 'field_changed' | 'new_item';
  field: string | null;
  before: unknown;
  after: unknown;
  change_pct: number | null;
  at: string;
}

async function getJson<T>(path: string, query: Record<string, string | number | undefined>): Promise<{ data: T; response: Response }> {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== '') params.set(name, String(value));
  const url = params.size ? `${path}?${params.toString()}` : path;
  let response: Response;
  try {
    response = await fetch(url, { headers: sessionHeaders(), credentials: 'same-origin' });
  } catch (error) {
    throw ApiProblem.network(error);
  }
  if (!response.ok) throw await ApiProblem.fromResponse(response);
  return { data: (await response.json()) as T, response };
}

export async function monitorSeries(monitorId: string, filters: SeriesFilters = {}): Promise<Series[]> {
  return (await unwrap(api.GET('/v1/monitors/{monitor_id}/series', { params: { path: { monitor_id: monitorId }, query: filters } }))).data;
}

export async function monitorChanges(
  monitorId: string,
  page: { limit?: number; starting_after?: string; target?: string; kind?: string } = {},
): Promise<{ items: MonitorChange[]; hasMore: boolean }> {
  const { data } = await getJson<{ data: MonitorChange[]; has_more: boolean }>(
    `/v1/monitors/${encodeURIComponent(monitorId)}/changes`,
    page,
  );
  return { items: data.data, hasMore: data.has_more };
}

/** The value a series held at `at`: its last point at or before then (a point is kept only on a change). */
export function valueAt(points: SeriesPoint[], at: number): number | null {
  let value: number | null = null;
  for (const p of points) {
    if (Date.parse(p.at) > at) break;
    value = p.value;
  }
  return value;
}

/** A series' latest value and its change over 1 and 7 days (null when the series is younger). */
export function latestWithChange(series: Series): { latest: number | null; day: number | null; week: number | null } {
  const last = series.points.at(-1);
  if (!last) return { latest: null, day: null, week: null };
  const now = Date.parse(last.at);
  const change = (ms: number) => {
    const first = series.points[0];
    if (Date.parse(first.at) > now - ms) return null;
    const before = valueAt(series.points, now - ms);
    return before === null ? null : last.value - before;
  };
  return { latest: last.value, day: change(86_400_000), week: change(7 * 86_400_000) };
}

/** Whether a change made an alert fire, by the spec's rules (crossing, percentage, new item). */
export function alertsFiredBy(change: MonitorChange, alerts: MonitorAlert[]): MonitorAlert[] {
  return alerts.filter((alert) => {
    if (alert.target && alert.target.toLowerCase() !== change.target.toLowerCase()) return false;
    if (alert.condition === 'new_item') return change.kind === 'new_item';
    if (change.kind !== 'metric_changed' || change.field !== alert.metric) return false;
    const before = typeof change.before === 'number' ? change.before : null;
    const after = typeof change.after === 'number' ? change.after : null;
    if (after === null || alert.threshold === undefined) return false;
    if (alert.condition === 'above') return after > alert.threshold && (before === null || before <= alert.threshold);
    if (alert.condition === 'below') return after < alert.threshold && (before === null || before >= alert.threshold);
    if (before === null || before === 0) return false;
    return (Math.abs(after - before) / before) * 100 >= alert.threshold;
  });
}
