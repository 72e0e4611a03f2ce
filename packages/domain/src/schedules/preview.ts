import { DateTime } from 'luxon';
import type { SchedulePreviewResponse } from '@sdx/contract';
import { checkRecurrence, type RecurrenceInput, upcomingRuns } from './definition';

export interface PreviewInput extends RecurrenceInput {
  count?: number;
}

export type SchedulePreview = SchedulePreviewResponse;

/**
 * POST /v1/schedules/preview: the next `count` (default 5) occurrences of a recurrence, exactly
 * as the scheduler would dispatch them from now (the same checks as a schedule body, the same
 * recurrence code), in UTC and in the schedule's time zone with its offset.
 */
export function previewSchedule(input: PreviewInput, now: Date): SchedulePreview {
  const { rule } = checkRecurrence(input, now);
  return {
    runs: upcomingRuns(rule, now, input.count ?? 5).map((at) => ({
      at_utc: at.toISOString(),
      at_local: DateTime.fromJSDate(at, { zone: rule.timezone }).toISO({ suppressMilliseconds: true })!,
    })),
  };
}
