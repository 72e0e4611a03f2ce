import { getBatchOrThrow } from '@sdx/domain/api';
import { streamGuard } from '../live/guard';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/**
 * GET /v1/batches/{batch_id}/events — Server-Sent Events of the batch until its terminal state;
 * 429 stream_limit_exceeded past MAX_STREAMS_PER_WORKSPACE open streams; ends when its credential does.
 */
export const streamBatchEvents = route('streamBatchEvents', {
  access: 'viewer',
  handler: async ({ deps: { services, live }, req, res }) => {
    const batch = await getBatchOrThrow(services.db, tenantOf(res), String(req.params.batch_id));
    await live.stream(req, res, { kind: 'batch', id: batch.id }, streamGuard(services, req, res));
  },
});
