import type { ScheduleRow, ScheduleRunRow } from '@sdx/db';
import type { ScheduleResponse, ScheduleRun } from '@sdx/contract';
import { scheduleCreator } from './creator';
import type { ScheduleView } from './queries';

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

/** ScheduleRun of openapi.yaml: every key, always. */
export function renderScheduleRun(run: ScheduleRunRow): ScheduleRun {
  return {
    id: run.id,
    schedule_id: run.schedule_id,
    trigger: run.trigger,
    scheduled_for: run.scheduled_for.toISOString(),
    status: run.status,
    job_id: run.job_id,
    batch_id: run.batch_id,
    error: (run.error as ScheduleRun['error']) ?? null,
    created_at: run.created_at.toISOString(),
    dispatched_at: iso(run.dispatched_at),
  };
}

/** ScheduleResponse of api-v1.md 2.6: starts_at as the caller wrote it, every other instant in UTC. */
export function renderSchedule(schedule: ScheduleRow, runs: ScheduleRunRow[]): ScheduleResponse {
  return {
    id: schedule.id,
    name: schedule.name,
    platform: schedule.platform,
    operation: schedule.operation,
    targets: schedule.targets,
    requested_limit: schedule.requested_limit,
    include_posts: schedule.include_posts,
    frequency: schedule.frequency,
    timezone: schedule.timezone,
    starts_at: schedule.starts_at_text,
    next_run_at: iso(schedule.next_run_at),
    last_run_at: iso(schedule.last_run_at),
    status: schedule.status,
    paused_reason: schedule.status === 'paused' ? schedule.paused_reason : null,
    overlap_policy: schedule.overlap_policy as ScheduleResponse['overlap_policy'],
    delivery: schedule.delivery,
    destination_id: schedule.destination_id,
    created_by: scheduleCreator(schedule),
    created_at: schedule.created_at.toISOString(),
    updated_at: schedule.updated_at.toISOString(),
    runs: runs.map(renderScheduleRun),
  };
}

export function renderScheduleView(view: ScheduleView): ScheduleResponse {
  return renderSchedule(view.schedule, view.runs);
}
