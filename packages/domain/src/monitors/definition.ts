import { DateTime } from 'luxon';
import type { MonitorRow, WorkspaceRow } from '@sdx/db';
import { costOf, findOperation, isMonitorable } from '@sdx/catalog';
import { isValidTimeZone } from '@sdx/recurrence';
import { uniqueTargets } from '../batches/create-batch';
import { ApiError, RequestValidationError } from '../errors';
import { resolveRecipe } from '../jobs/recipe';
import type { OperationGate } from '../resources';

export type MonitorFrequency = 'hourly' | 'daily' | 'weekly';
export type AlertCondition = 'above' | 'below' | 'change_pct_above' | 'new_item';

export interface MonitorAlert {
  metric: string;
  condition: AlertCondition;
  threshold?: number;
  target?: string;
}

/** The body of POST /v1/monitors, as validated by the schema. */
export interface MonitorInput {
  name?: string;
  platform?: string;
  operation: string;
  targets: string[];
  limit?: number;
  frequency: MonitorFrequency;
  time_of_day?: string | null;
  day_of_week?: string | null;
  timezone?: string;
  alerts?: MonitorAlert[];
  destination_id?: string | null;
}

/** The body of PATCH /v1/monitors/{id}: any field of the create body but platform and operation. */
export type MonitorPatch = Partial<Omit<MonitorInput, 'platform' | 'operation'>>;

/** The most targets one monitor follows, and the most targets of each of its run's batches. */
export const MAX_MONITOR_TARGETS = 1000;
export const MONITOR_BATCH_SIZE = 100;
export const MAX_MONITOR_ALERTS = 20;

/** Runs a month of each frequency, for `estimated_credits_per_month` (extensions-3.md section 6). */
export const RUNS_PER_MONTH: Record<MonitorFrequency, number> = { hourly: 730, daily: 30, weekly: 4 };

export const DAYS_OF_WEEK = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;

/** The series a monitor of the operation keeps: a profile's counts, or each listed item's metrics. */
export const PROFILE_METRICS = ['followers_count', 'following_count', 'posts_count'] as const;
export const ITEM_METRICS = ['views', 'likes', 'comments', 'shares'] as const;

export function metricsOf(operation: string): readonly string[] {
  return operation === 'profile' ? PROFILE_METRICS : ITEM_METRICS;
}

/** A checked monitor definition: its stored columns. */
export interface MonitorDefinition {
  name: string;
  platform: string;
  operation: string;
  targets: string[];
  requestedLimit: number;
  frequency: MonitorFrequency;
  timeOfDay: string | null;
  dayOfWeek: string | null;
  timezone: string;
  alerts: MonitorAlert[];
  destinationId: string | null;
}

export function monitorColumns(def: MonitorDefinition) {
  return {
    name: def.name,
    platform: def.platform,
    operation: def.operation,
    targets: JSON.stringify(def.targets),
    requested_limit: def.requestedLimit,
    frequency: def.frequency,
    time_of_day: def.timeOfDay,
    day_of_week: def.dayOfWeek,
    timezone: def.timezone,
    alerts: JSON.stringify(def.alerts),
    destination_id: def.destinationId,
  };
}

function invalid(loc: (string | number)[], msg: string, input?: unknown): RequestValidationError {
  return new RequestValidationError([{ loc, msg, type: 'value_error', ...(input !== undefined ? { input } : {}) }]);
}

/**
 * Checks a monitor body beyond the schema: a monitorable operation (422
 * operation_not_monitorable, after the catalog's own checks), 1 to 1000 unique targets each
 * valid for the operation, the limit as POST /v1/jobs checks it, a real IANA zone, the
 * recurrence's fields for its frequency, and alerts on the operation's metrics and the
 * monitor's own targets.
 */
export function checkMonitorInput(input: MonitorInput, workspace: WorkspaceRow, gate: OperationGate): MonitorDefinition {
  if (input.targets.length < 1 || input.targets.length > MAX_MONITOR_TARGETS) {
    throw new RequestValidationError([
      {
        loc: ['body', 'targets'],
        msg: `List should have at ${input.targets.length < 1 ? 'least 1 item' : `most ${MAX_MONITOR_TARGETS} items`}`,
        type: input.targets.length < 1 ? 'too_short' : 'too_long',
      },
    ]);
  }
  const targets = uniqueTargets(input.targets);
  const { recipe } = resolveRecipe(
    { platform: input.platform, operation: input.operation, limit: input.limit },
    targets.map((value, i) => ({ value, loc: ['body', 'targets', i] })),
    workspace,
    gate,
  );
  if (!isMonitorable(recipe.platform, recipe.operation)) {
    throw new ApiError(
      'operation_not_monitorable',
      `${recipe.platform} ${recipe.operation} cannot be monitored: monitors follow profiles and the lists of a target's own posts or videos (GET /v1/platforms marks them monitorable).`,
      { platform: recipe.platform, operation: recipe.operation },
    );
  }
  const timezone = input.timezone ?? 'UTC';
  if (!isValidTimeZone(timezone)) throw invalid(['body', 'timezone'], 'Input should be a valid IANA time zone name', timezone);
  const { timeOfDay, dayOfWeek } = checkRecurrenceFields(input.frequency, input.time_of_day ?? null, input.day_of_week ?? null);
  const alerts = checkAlerts(input.alerts ?? [], recipe.operation, targets);
  return {
    name: input.name?.trim() || `${recipe.platform} ${recipe.operation}`,
    platform: recipe.platform,
    operation: recipe.operation,
    targets,
    requestedLimit: recipe.limit,
    frequency: input.frequency,
    timeOfDay,
    dayOfWeek,
    timezone,
    alerts,
    destinationId: input.destination_id ?? null,
  };
}

/** The definition a PATCH leaves: the stored monitor with the body's fields over it, checked as a create body. */
export function patchedInput(monitor: MonitorRow, patch: MonitorPatch): MonitorInput {
  const frequencyChanged = patch.frequency !== undefined && patch.frequency !== monitor.frequency;
  return {
    name: patch.name ?? monitor.name,
    platform: monitor.platform,
    operation: monitor.operation,
    targets: patch.targets ?? monitor.targets,
    limit: patch.limit ?? monitor.requested_limit,
    frequency: patch.frequency ?? monitor.frequency,
    // A new frequency does not inherit fields the old one had and it may not take.
    time_of_day: patch.time_of_day !== undefined ? patch.time_of_day : frequencyChanged ? null : monitor.time_of_day,
    day_of_week: patch.day_of_week !== undefined ? patch.day_of_week : frequencyChanged ? null : monitor.day_of_week,
    timezone: patch.timezone ?? monitor.timezone,
    alerts: patch.alerts ?? (monitor.alerts as MonitorAlert[]),
    destination_id: patch.destination_id !== undefined ? patch.destination_id : monitor.destination_id,
  };
}

/**
 * time_of_day (HH:MM, 24 h) is when a daily or weekly monitor runs (default 00:00); an hourly
 * monitor takes only its minutes (default :00). day_of_week is for weekly monitors only
 * (default monday).
 */
function checkRecurrenceFields(
  frequency: MonitorFrequency,
  timeOfDay: string | null,
  dayOfWeek: string | null,
): { timeOfDay: string | null; dayOfWeek: string | null } {
  if (timeOfDay !== null && !/^([01]\d|2[0-3]):[0-5]\d$/.test(timeOfDay)) {
    throw invalid(['body', 'time_of_day'], 'Input should be a time of day as HH:MM (00:00 to 23:59)', timeOfDay);
  }
  if (dayOfWeek !== null && frequency !== 'weekly') {
    throw invalid(['body', 'day_of_week'], 'day_of_week applies to weekly monitors only', dayOfWeek);
  }
  if (frequency === 'hourly') return { timeOfDay: timeOfDay === null ? null : `00:${timeOfDay.slice(3)}`, dayOfWeek: null };
  return { timeOfDay: timeOfDay ?? '00:00', dayOfWeek: frequency === 'weekly' ? (dayOfWeek ?? 'monday') : null };
}

function checkAlerts(alerts: MonitorAlert[], operation: string, targets: string[]): MonitorAlert[] {
  if (alerts.length > MAX_MONITOR_ALERTS) {
    throw new RequestValidationError([
      { loc: ['body', 'alerts'], msg: `List should have at most ${MAX_MONITOR_ALERTS} items`, type: 'too_long' },
    ]);
  }
  const metrics = metricsOf(operation);
  const byKey = new Map(targets.map((t) => [t.toLowerCase(), t]));
  return alerts.map((alert, i) => {
    if (!metrics.includes(alert.metric)) {
      throw invalid(['body', 'alerts', i, 'metric'], `A monitor of ${operation} keeps the metrics ${metrics.join(', ')}`, alert.metric);
    }
    if (alert.condition === 'new_item' && operation === 'profile') {
      throw invalid(['body', 'alerts', i, 'condition'], 'new_item applies to monitors of a list of posts or videos', alert.condition);
    }
    if (alert.condition !== 'new_item' && alert.threshold === undefined) {
      throw invalid(['body', 'alerts', i, 'threshold'], `A ${alert.condition} alert needs a threshold`);
    }
    let target: string | undefined;
    if (alert.target !== undefined) {
      target = byKey.get(alert.target.trim().toLowerCase());
      if (target === undefined)
        throw invalid(['body', 'alerts', i, 'target'], "An alert's target must be one of the monitor's targets", alert.target);
    }
    return {
      metric: alert.metric,
      condition: alert.condition,
      ...(alert.threshold !== undefined && alert.condition !== 'new_item' ? { threshold: alert.threshold } : {}),
      ...(target !== undefined ? { target } : {}),
    };
  });
}

/** The most one run can cost: every target at the monitor's limit (the reservation of its batches). */
export function creditsPerRun(monitor: Pick<MonitorRow, 'platform' | 'operation' | 'requested_limit' | 'targets'>): number {
  const spec = findOperation(monitor.platform, monitor.operation);
  return spec ? costOf(spec, monitor.requested_limit) * monitor.targets.length : 0;
}

/**
 * The first occurrence strictly after `after` (or at it, when inclusive), in the monitor's zone:
 * hourly at the minute of time_of_day (default :00) past each hour; daily at time_of_day;
 * weekly on day_of_week at time_of_day. A local time that daylight saving skips moves forward
 * with the clocks (luxon's rule).
 */
export function nextMonitorRun(
  monitor: Pick<MonitorRow, 'frequency' | 'time_of_day' | 'day_of_week' | 'timezone'>,
  after: Date,
  options: { inclusive?: boolean } = {},
): Date {
  const now = DateTime.fromJSDate(after, { zone: monitor.timezone });
  const [hh, mm] = (monitor.time_of_day ?? '00:00').split(':').map(Number) as [number, number];
  const ok = (candidate: DateTime) => (options.inclusive ? candidate.toMillis() >= now.toMillis() : candidate.toMillis() > now.toMillis());
  if (monitor.frequency === 'hourly') {
    let candidate = now.startOf('hour').set({ minute: mm });
    while (!ok(candidate)) candidate = candidate.plus({ hours: 1 });
    return candidate.toJSDate();
  }
  const at = (d: DateTime) => d.set({ hour: hh, minute: mm, second: 0, millisecond: 0 });
  let day = now.startOf('day');
  if (monitor.frequency === 'weekly') {
    const weekday = DAYS_OF_WEEK.indexOf((monitor.day_of_week ?? 'monday') as (typeof DAYS_OF_WEEK)[number]) + 1;
    day = day.plus({ days: (weekday - day.weekday + 7) % 7 });
    while (!ok(at(day))) day = day.plus({ weeks: 1 });
    return at(day).toJSDate();
  }
  while (!ok(at(day))) day = day.plus({ days: 1 });
  return at(day).toJSDate();
}
