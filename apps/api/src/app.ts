import express, { type Express, type RequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { OPENAPI_PATH } from '@sdx/contract';
import type { ApiDeps } from './deps';
import { accessLog } from './middleware/access-log';
import { authenticate, recordKeyUse } from './middleware/auth';
import { HeavyReads } from './middleware/heavy-reads';
import { methodNotAllowed, notFound, renderErrors } from './middleware/errors';
import { rateLimit } from './middleware/rate-limit';
import { requestId } from './middleware/request-id';
import { cancelJob } from './routes/cancelJob';
import { createJob } from './routes/createJob';
import { extract } from './routes/extract';
import { getAccount } from './routes/getAccount';
import { getCurrentUsage } from './routes/getCurrentUsage';
import { getJob } from './routes/getJob';
import { healthz, readyz } from './routes/health';
import { listJobs } from './routes/listJobs';
import { listPlatforms } from './routes/listPlatforms';
import { routeTable } from './routes';

type Method = 'get' | 'post' | 'put' | 'delete';

export interface RouteDef {
  method: Method;
  path: string;
  /** Public routes skip authentication and rate limiting. */
  public?: boolean;
  handler: (deps: ApiDeps) => RequestHandler;
}

/** Every route of the API, by operationId of openapi.yaml. */
export const ROUTES: RouteDef[] = [
  { method: 'get', path: '/healthz', public: true, handler: healthz },
  { method: 'get', path: '/readyz', public: true, handler: readyz },
  { method: 'get', path: '/v1/platforms', public: true, handler: listPlatforms },
  { method: 'get', path: '/v1/account', handler: getAccount },
  { method: 'get', path: '/v1/usage/current', handler: getCurrentUsage },
  { method: 'post', path: '/v1/extract', handler: extract },
  { method: 'post', path: '/v1/jobs', handler: createJob },
  { method: 'get', path: '/v1/jobs', handler: listJobs },
  { method: 'get', path: '/v1/jobs/:job_id', handler: getJob },
  { method: 'post', path: '/v1/jobs/:job_id/cancel', handler: cancelJob },
  ...routeTable,
];

/**
 * HEAD is GET without a body (RFC 9110, 9.3.2), so a health check or a client probing a
 * resource by HEAD gets what GET would answer. openapi.yaml documents GET only, so the request
 * goes on as GET; Node's response already knows it answers a HEAD and sends no body.
 */
const headAsGet: RequestHandler = (req, _res, next) => {
  if (req.method === 'HEAD') req.method = 'GET';
  next();
};

/**
 * The API: request ID → access log → route match → authentication (tenant resolved once) →
 * rate limit → request validation against openapi.yaml → route → one error renderer.
 */
export function createApp(given: Omit<ApiDeps, 'heavyReads'> & Partial<Pick<ApiDeps, 'heavyReads'>>): Express {
  const { config } = given.services;
  const deps: ApiDeps = { ...given, heavyReads: given.heavyReads ?? new HeavyReads(config.heavyReadsPerWorkspace, config.heavyReadMinItems) };
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(requestId);
  app.use(accessLog(deps.services.log));
  app.use(headAsGet);
  app.use(express.json({ limit: '1mb', type: () => true }));

  const authenticated = [authenticate(deps.services), rateLimit(deps.limiter), recordKeyUse(deps.services)];
  const validator = OpenApiValidator.middleware({
    apiSpec: OPENAPI_PATH,
    validateRequests: { allowUnknownQueryParameters: false, coerceTypes: false, allErrors: true },
    validateResponses: false,
    validateSecurity: false,
    validateFormats: true,
    ignoreUndocumented: false,
  });

  for (const route of ROUTES) {
    const chain: RequestHandler[] = route.public ? [] : authenticated;
    app[route.method](route.path, ...chain, ...validator, route.handler(deps));
  }
  app.use(methodNotAllowed(ROUTES));
  app.use(notFound);
  app.use(renderErrors(deps.services.log));
  return app;
}
