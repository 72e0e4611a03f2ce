import { quote } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { skipCache } from './job-request';
import { route } from './route';

/** POST /v1/quotes — what the matching create call would reserve now; writes nothing. */
export const createQuote = route('createQuote', {
  access: 'member',
  handler: async ({ deps: { services }, req, res }, body) => {
    const input = {
      platform: body.platform,
      operation: body.operation,
      target: body.target,
      targets: body.targets,
      limit: body.limit,
      include_posts: body.include_posts,
    };
    res.json(await quote(services, tenantOf(res), input, { skipCache: skipCache(req) }));
  },
});
