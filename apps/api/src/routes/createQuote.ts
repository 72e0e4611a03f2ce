import type { RequestHandler } from 'express';
import type { QuoteRequest } from '@sdx/contract';
import { quote } from '@sdx/domain/api';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';
import { skipCache } from './job-request';

/** POST /v1/quotes — what the matching create call would reserve now; writes nothing. */
export const createQuote = ({ services }: ApiDeps): RequestHandler => async (req, res) => {
  const body = req.body as QuoteRequest;
  const input = { platform: body.platform, operation: body.operation, target: body.target, targets: body.targets, limit: body.limit, include_posts: body.include_posts };
  res.json(await quote(services, tenantOf(res), input, { skipCache: skipCache(req) }));
};
