import { aggregateChildren, createBatch as create, renderBatch } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** POST /v1/batches — 202 with the queued batch and one child summary per target (or the replayed batch). */
export const createBatch = route('createBatch', {
  access: 'member',
  handler: async ({ deps: { services }, req, res }, body) => {
    const created = await create(
      services,
      tenantOf(res),
      {
        platform: body.platform,
        operation: body.operation,
        targets: body.targets,
        limit: body.limit,
        include_posts: body.include_posts,
        destination_id: body.destination_id,
      },
      { endpoint: 'POST /v1/batches', idempotencyKey: req.get('idempotency-key') ?? null, requestId: res.locals.requestId as string },
    );
    const children = created.jobs.map((job) => ({ id: job.id, target: job.target, status: job.status }));
    res.setHeader('Location', `/v1/batches/${created.batch.id}`);
    res
      .status(202)
      .json(renderBatch(created.batch, aggregateChildren(created.jobs), children, { idempotent_replay: created.idempotentReplay }));
  },
});
