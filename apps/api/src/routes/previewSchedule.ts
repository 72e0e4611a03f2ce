import type { RequestHandler } from 'express';
import type { SchedulePreviewRequest } from '@sdx/contract';
import { previewSchedule as preview } from '@sdx/domain/api';
import type { ApiDeps } from '../deps';

/** POST /v1/schedules/preview — the next occurrences, as the scheduler will dispatch them. */
export const previewSchedule = ({ services }: ApiDeps): RequestHandler => async (req, res) => {
  const body = req.body as SchedulePreviewRequest;
  res.json(preview({ frequency: body.frequency, timezone: body.timezone, starts_at: body.starts_at, count: body.count }, services.clock.now()));
};
