import type { RequestHandler } from 'express';
import { getBatchOrThrow } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { streamGuard } from '../live/guard';
import { tenantOf } from '../middleware/tenant';

/**
 * GET /v1/batches/{batch_id}/events — Server-Sent Events of the batch until its terminal state;
 * 429 stream_limit_exceeded past MAX_STREAMS_PER_WORKSPACE open streams; ends when its credential does.
 */
export const streamBatchEvents = ({ services, live }: AppDeps): RequestHandler => async (req, res) => {
  const batch = await getBatchOrThrow(services.db, tenantOf(res), String(req.params.batch_id));
  await live.stream(req, res, { kind: 'batch', id: batch.id }, streamGuard(services, req, res));
};
