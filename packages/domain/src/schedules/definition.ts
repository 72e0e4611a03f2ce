import { DateTime } from 'luxon';
import type { ScheduleRow, WorkspaceRow } from '@sdx/db';
import { type Frequency, isValidTimeZone, nextOccurrence, type Recurrence } from '@sdx/recurrence';
import { uniqueNormalizedTargets, uniqueTargets } from '../batches/create-batch';
import type { OperationGate } from '../resources';
import { RequestValidationError } from '../errors';
import { resolveRecipe } from '../jobs/recipe';

/** The body of POST /v1/schedules and PUT /v1/schedules/{id} (ScheduleCreateRequest), as validated by the schema. */
export interface ScheduleInput {
  name: string;
  platform?: string;
  operation: string;
  targets: string[];
  limit?: number;
  include_posts?: number;
  frequency: Frequency;
  timezone: string;
  starts_at: string;
  overlap_policy?: 'skip';
  delivery?: 'all' | 'new_only';
  /** A destination of the workspace every occurrence's job or batch is delivered to. */
  destination_id?: string | null;
}

/** A checked schedule: the recipe every occurrence dispatches, and its recurrence. */
export interface ScheduleDefinition {
  name: string;
  platform: string;
  operation: string;
  /** Trimmed, unique (case-insensitively), in the caller's order. */
  targets: string[];
  /** The effective limit, as a job reports it. */
  requestedLimit: number;
  includePosts: number;
  frequency: Frequency;
  timezone: string;
  startsAt: Date;
  /** starts_at exactly as the caller wrote it, echoed with its offset. */
  startsAtText: string;
  overlapPolicy: 'skip';
  /** new_only: each occurrence delivers (and bills) only items no earlier one delivered. */
  delivery: 'all' | 'new_only';
  /** The destination of every occurrence's work (checked to be the workspace's by the caller). */
  destinationId: string | null;
  /** First automatic occurrence. */
  nextRunAt: Date;
}

/** The stored columns of a definition: the recipe and the recurrence, shared by create and PUT. */
export function definitionColumns(def: ScheduleDefinition) {
  return {
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
    overlap_policy: def.overlapPolicy,
    delivery: def.delivery,
    destination_id: def.destinationId,
  };
}

/**
 * After downtime, the latest missed occurrence is still dispatched when it is at most this old;
 * older ones are dropped (decisions.md, Schedules). A `once` schedule may also be created with a
 * starts_at this far in the past: it then runs at the scheduler's next tick.
 */
export const CATCH_UP_WINDOW_MS = 60 * 60 * 1000;

/** Runs shown in a schedule's `runs`, newest first. */
export const RECENT_RUNS = 20;

/** A UTC offset at the end of an ISO date-time: Z, +hh, +hhmm or +hh:mm. */
const OFFSET_SUFFIX = /(?:[Zz]|[+-]\d{2}(?::?\d{2})?)$/;

export function recurrenceOf(schedule: Pick<ScheduleRow, 'frequency' | 'timezone' | 'starts_at'>): Recurrence {
  return { frequency: schedule.frequency, timezone: schedule.timezone, startsAt: schedule.starts_at };
}

/**
 * Checks a schedule body beyond the schema (api-v1.md 4.4), so a schedule that could never
 * dispatch is refused now rather than at each occurrence: the time zone must be a real IANA zone
 * and starts_at must carry an offset (422 validation error); targets unique as for batches
 * (422 duplicate_batch_target); operation, targets and limit exactly as POST /v1/jobs checks
 * them (unsupported_operation, invalid_target, limit rules). Nothing is reserved.
 */
export function checkScheduleInput(input: ScheduleInput, workspace: WorkspaceRow, gate: OperationGate, now: Date): ScheduleDefinition {
  const { startsAt, nextRunAt } = checkRecurrence(input, now);
  if (input.targets.length < 1 || input.targets.length > 100) {
    throw new RequestValidationError([
      {
        loc: ['body', 'targets'],
        msg: `List should have at ${input.targets.length < 1 ? 'least 1 item' : 'most 100 items'}`,
        type: input.targets.length < 1 ? 'too_short' : 'too_long',
      },
    ]);
  }
  const targets = uniqueTargets(input.targets);
  const { recipe, normalized } = resolveRecipe(
    input,
    targets.map((value, i) => ({ value, loc: ['body', 'targets', i] })),
    workspace,
    gate,
  );
  uniqueNormalizedTargets(targets, normalized);
  const delivery = input.delivery ?? 'all';
  // Only what is new is a question for lists; a single-result operation has nothing to filter.
  if (delivery === 'new_only' && recipe.spec.max_results <= 1) {
    throw new RequestValidationError([
      {
        loc: ['body', 'delivery'],
        msg: `new_only applies to list operations; ${recipe.platform} ${recipe.operation} returns a single result`,
        type: 'value_error',
        input: delivery,
      },
    ]);
  }
  return {
    name: input.name,
    platform: recipe.platform,
    operation: recipe.operation,
    targets,
    requestedLimit: recipe.limit,
    includePosts: recipe.includePosts,
    frequency: input.frequency,
    timezone: input.timezone,
    startsAt,
    startsAtText: input.starts_at,
    overlapPolicy: input.overlap_policy ?? 'skip',
    delivery,
    destinationId: input.destination_id ?? null,
    nextRunAt,
  };
}

export interface RecurrenceInput {
  frequency: Frequency;
  timezone: string;
  starts_at: string;
}

/**
 * Checks a recurrence as a schedule body gives it: a real IANA zone, a starts_at with an offset
 * (422 validation errors otherwise), and at least one occurrence to come (a once schedule no
 * older than the catch-up window). Returns the rule and its first automatic occurrence.
 */
export function checkRecurrence(input: RecurrenceInput, now: Date): { rule: Recurrence; startsAt: Date; nextRunAt: Date } {
  if (!isValidTimeZone(input.timezone)) {
    throw new RequestValidationError([
      { loc: ['body', 'timezone'], msg: 'Input should be a valid IANA time zone name', type: 'value_error', input: input.timezone },
    ]);
  }
  const startsAt = parseStartsAt(input.starts_at);
  const rule: Recurrence = { frequency: input.frequency, timezone: input.timezone, startsAt };
  const nextRunAt = firstRunAt(rule, now);
  if (nextRunAt === null) {
    throw new RequestValidationError([
      { loc: ['body', 'starts_at'], msg: 'A once schedule must start in the future', type: 'value_error', input: input.starts_at },
    ]);
  }
  return { rule, startsAt, nextRunAt };
}

/**
 * The occurrences the scheduler will dispatch, from now on, at most `count`: the first
 * automatic occurrence (firstRunAt), then each next one (nextOccurrence), the same functions the
 * scheduler advances a schedule with.
 */
export function upcomingRuns(rule: Recurrence, now: Date, count: number): Date[] {
  const runs: Date[] = [];
  let next = firstRunAt(rule, now);
  while (next !== null && runs.length < count) {
    runs.push(next);
    next = rule.frequency === 'once' ? null : nextOccurrence(rule, next);
  }
  return runs;
}

/**
 * The first automatic occurrence of a new or replaced schedule: a recurring schedule's first
 * occurrence that is not in the past; a once schedule's starts_at, accepted up to the catch-up
 * window in the past (it then runs at once), null when older.
 */
export function firstRunAt(rule: Recurrence, now: Date): Date | null {
  if (rule.frequency === 'once') {
    return rule.startsAt.getTime() >= now.getTime() - CATCH_UP_WINDOW_MS ? rule.startsAt : null;
  }
  return nextOccurrence(rule, now, { inclusive: true });
}

function parseStartsAt(text: string): Date {
  const parsed = DateTime.fromISO(text, { setZone: true });
  if (!OFFSET_SUFFIX.test(text) || !parsed.isValid) {
    throw new RequestValidationError([
      {
        loc: ['body', 'starts_at'],
        msg: 'Input should be a date-time with a UTC offset, e.g. 2026-03-01T09:00:00-05:00',
        type: 'value_error',
        input: text,
      },
    ]);
  }
  return parsed.toJSDate();
}
