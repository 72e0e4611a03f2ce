import type { RequestHandler } from 'express';
import { toPlatformResponse } from '@sdx/providers';
import type { ApiDeps } from '../deps';

/** GET /v1/platforms — no credentials; the enabled catalog. */
export const listPlatforms = ({ registry }: ApiDeps): RequestHandler => {
  const body = toPlatformResponse(registry);
  return (_req, res) => {
    res.json(body);
  };
};
