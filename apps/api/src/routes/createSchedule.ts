import type { Request, RequestHandler } from 'express';
import type { ScheduleCreateRequest } from '@sdx/contract';
import { createSchedule as create, renderScheduleView, type ScheduleInput } from '@sdx/domain/api';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** The validated body of POST /v1/schedules and PUT /v1/schedules/{id}. */
export function scheduleInput(req: Request): ScheduleInput {
  const body = req.body as ScheduleCreateRequest;
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
export const createSchedule = ({ services }: ApiDeps): RequestHandler => async (req, res) => {
  const view = await create(services, tenantOf(res), scheduleInput(req));
  res.status(201).json(renderScheduleView(view));
};
