import type { Request, RequestHandler } from 'express';
import { httpRequestDuration, httpRequests } from '@sdx/metrics';

/** Label of requests no route matched (404, 405): never the raw path, whose values are unbounded. */
export const UNMATCHED_ROUTE = 'unmatched';

/** The route template that answered (`/v1/jobs/:job_id`), or UNMATCHED_ROUTE. */
function routeOf(req: Request): string {
  const route = (req.route as { path?: unknown } | undefined)?.path;
  return typeof route === 'string' ? `${req.baseUrl}${route}` : UNMATCHED_ROUTE;
}

/**
 * sdx_http_requests_total{method,route,status} and sdx_http_request_duration_seconds{method,route},
 * recorded when the response is finished (or the client went away first). The route is the
 * template Express matched, read then, so IDs never become label values.
 */
export function httpMetrics(): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    // Read now: a HEAD request is handled as GET further on (see app.ts).
    const method = req.method;
    res.once('close', () => {
      const route = routeOf(req);
      httpRequests.inc({ method, route, status: String(res.statusCode) });
      httpRequestDuration.observe({ method, route }, (performance.now() - started) / 1000);
    });
    next();
  };
}
