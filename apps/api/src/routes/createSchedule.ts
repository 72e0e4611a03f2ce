import type { ScheduleCreateRequest } from '@sdx/contract';
import { createSchedule as create, renderScheduleView, type ScheduleInput } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** The validated body of POST /v1/schedules and PUT /v1/schedules/{id}. */
export function scheduleInput(body: ScheduleCreateRequest): ScheduleInput {
  return {
    name: body.name,
    platform: body.platform,
    operation: body.operation,
    targets: body.targets,
    limit: body.limit,
    include_posts: body.include_posts,
    frequency: body.frequency,
    timezone: body.timezone,
    starts_at: body.starts_at,
    overlap_policy: body.overlap_policy,
    delivery: body.delivery,
    destination_id: body.destination_id,
  };
}

/** POST /v1/schedules — 201 with the active schedule and its next_run_at. */
export const createSchedule = route('createSchedule', {
  access: 'member',
  handler: async ({ deps: { services }, res }, body) => {
    const view = await create(services, tenantOf(res), scheduleInput(body));
    res.status(201).json(renderScheduleView(view));
  },
});
