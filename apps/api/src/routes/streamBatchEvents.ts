import type { RequestHandler } from 'express';
import { getBatchOrThrow } from '@sdx/domain';
import type { AppDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** GET /v1/batches/{batch_id}/events — Server-Sent Events of the batch until its terminal state. */
export const streamBatchEvents = ({ services, live }: AppDeps): RequestHandler => async (req, res) => {
  const batch = await getBatchOrThrow(services.db, tenantOf(res), String(req.params.batch_id));
  live.stream(req, res, { kind: 'batch', id: batch.id });
};
