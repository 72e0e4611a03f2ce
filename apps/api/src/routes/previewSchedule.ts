import { previewSchedule as preview } from '@sdx/domain/api';
import { route } from './route';

/** POST /v1/schedules/preview — the next occurrences, as the scheduler will dispatch them. */
export const previewSchedule = route('previewSchedule', {
  access: 'viewer',
  handler: ({ deps: { services }, res }, body) => {
    res.json(
      preview({ frequency: body.frequency, timezone: body.timezone, starts_at: body.starts_at, count: body.count }, services.clock.now()),
    );
  },
});
