import type { RequestHandler } from 'express';
import { scrape } from '@sdx/metrics';
import type { ApiDeps } from '../deps';

/** GET /metrics — the process's Prometheus series (docs/deployment.md "Metrics"). */
export const getMetrics = (_deps: ApiDeps): RequestHandler => async (_req, res) => {
  const { contentType, body } = await scrape();
  res.setHeader('Cache-Control', 'no-store');
  res.type(contentType).send(body);
};
