import express, { type Express, type RequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { loadOpenApiDocument, OPENAPI_PATH } from '@sdx/contract';
import { processBilling, wakeOverRedis } from '@sdx/runtime';
import type { ApiDeps, AppDeps } from './deps';
import { requireAccess } from './middleware/access';
import { accessLog } from './middleware/access-log';
import { adminQueues } from './middleware/admin';
import { authenticate, recordKeyUse } from './middleware/auth';
import { compressResponses } from './middleware/compression';
import { consoleRoutes } from './middleware/console';
import { corsFor } from './middleware/cors';
import { HeavyReads } from './middleware/heavy-reads';
import { methodNotAllowed, notFound, renderErrors } from './middleware/errors';
import { httpMetrics } from './middleware/metrics';
import { LoginLimiter } from './middleware/login-limit';
import { integerQueryParameters, jsonBody, refuseUnstorableInput, takesBody } from './middleware/input';
import { rateLimit } from './middleware/rate-limit';
import { requestId } from './middleware/request-id';
import { rememberValidatorRoutes } from './middleware/validator-routes';
import { cancelJob } from './routes/cancelJob';
import { createJob } from './routes/createJob';
import { extract } from './routes/extract';
import { getAccount } from './routes/getAccount';
import { getCurrentUsage } from './routes/getCurrentUsage';
import { getJob } from './routes/getJob';
import { getDocs } from './routes/getDocs';
import { getDocsScript } from './routes/getDocsScript';
import { getMetrics } from './routes/getMetrics';
import { getOpenApiJson } from './routes/getOpenApiJson';
import { getOpenApiYaml } from './routes/getOpenApiYaml';
import { healthz, readyz } from './routes/health';
import { listJobs } from './routes/listJobs';
import { listPlatforms } from './routes/listPlatforms';
import { routeTable } from './routes';
import { accessOf } from './routes/access';
import { accountRoutes } from './routes/accounts';
import { webhookRoutes } from './routes/webhooks';
import { destinationRoutes } from './routes/destinations';
import { billingRoutes } from './routes/billing';
import { LiveHub } from './live/hub';
import { oauthRoutes } from './oauth';
import { mcpRoutes } from './mcp';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** A route; who may call it is declared beside this table, in routes/access.ts (public routes skip authentication and rate limiting). */
export interface RouteDef {
  method: Method;
  path: string;
  handler: (deps: AppDeps) => RequestHandler;
}

/** Every route of the API, by operationId of openapi.yaml. */
export const ROUTES: RouteDef[] = [
  { method: 'get', path: '/healthz', handler: healthz },
  { method: 'get', path: '/readyz', handler: readyz },
  { method: 'get', path: '/metrics', handler: getMetrics },
  { method: 'get', path: '/openapi.yaml', handler: getOpenApiYaml },
  { method: 'get', path: '/openapi.json', handler: getOpenApiJson },
  { method: 'get', path: '/docs', handler: getDocs },
  { method: 'get', path: '/docs/redoc.standalone.js', handler: getDocsScript },
  { method: 'get', path: '/v1/platforms', handler: listPlatforms },
  { method: 'get', path: '/v1/account', handler: getAccount },
  { method: 'get', path: '/v1/usage/current', handler: getCurrentUsage },
  { method: 'post', path: '/v1/extract', handler: extract },
  { method: 'post', path: '/v1/jobs', handler: createJob },
  { method: 'get', path: '/v1/jobs', handler: listJobs },
  { method: 'get', path: '/v1/jobs/:job_id', handler: getJob },
  { method: 'post', path: '/v1/jobs/:job_id/cancel', handler: cancelJob },
  ...routeTable,
  ...accountRoutes,
  ...webhookRoutes,
  ...destinationRoutes,
  ...billingRoutes,
];

/**
 * Routes whose body is read as the exact bytes sent (a Buffer, up to 1 MB) instead of parsed as
 * JSON, and that check it themselves instead of the request validator: Stripe's webhook, whose
 * signature covers those bytes (a parsed and re-serialised body would not match).
 */
const RAW_BODY_ROUTES = new Set(['POST /v1/billing/stripe/webhook']);

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
 * The API: request ID → counted as in progress (heavy reads' slices wait for it) → metrics →
 * access log → compression (responses over 1 KB, when the client accepts gzip or br) → CORS
 * (origins of CORS_ORIGINS only) → route match → JSON body (operations that take one; bounded
 * in size and depth) → authentication (caller and workspace
 * resolved once) → rate limit → the route's declared access → input Postgres cannot store
 * refused → request validation against openapi.yaml → route → one error renderer. A route
 * without a declared access stops the app from being built. The web console's files answer at
 * /console (middleware/console.ts). With ADMIN_TOKEN set, Bull Board answers at /admin/queues behind
 * that token. OAuth's protocol endpoints (/.well-known/*, /oauth/*: oauth/index.ts) come before
 * the route table with their own body parsing and RFC 6749 errors; `/mcp` (mcp/index.ts) after
 * it, with the same authentication and rate limit and each tool's REST route's access.
 */
export function createApp(apiDeps: ApiDeps, routes: RouteDef[] = ROUTES): Express {
  const config = apiDeps.services.config;
  const deps: AppDeps = {
    ...apiDeps,
    loginLimiter: apiDeps.loginLimiter ?? new LoginLimiter(apiDeps.redis, config.redisPrefix, config.signupLimitPerHour),
    mailer: apiDeps.mailer !== undefined ? apiDeps.mailer : wakeOverRedis(apiDeps.redis, config.redisPrefix, 'mail'),
    heavyReads: apiDeps.heavyReads ?? new HeavyReads(config.heavyReadsPerWorkspace, config.heavyReadMinItems),
    live: apiDeps.live ?? new LiveHub({ db: apiDeps.services.db, redisUrl: config.redisUrl, redisClusterNodes: config.redisClusterNodes, prefix: config.redisPrefix, log: apiDeps.services.log }),
    billing: apiDeps.billing ?? processBilling(apiDeps.services, wakeOverRedis(apiDeps.redis, config.redisPrefix, 'recharge')),
  };
  // A draining process ends its live streams: their clients reconnect to another process.
  apiDeps.draining?.addEventListener('abort', () => void deps.live.close(), { once: true });
  const access = new Map(routes.map((route) => [route, accessOf(route)]));
  const app = express();
  if (config.trustProxy !== null) app.set('trust proxy', config.trustProxy);
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(requestId);
  app.use(deps.heavyReads.track);
  app.use(httpMetrics());
  app.use(accessLog(deps.services.log));
  app.use(compressResponses());
  if (config.corsOrigins.length > 0) app.use(corsFor(config.corsOrigins));
  app.use(headAsGet);
  app.use(consoleRoutes());
  const adminToken = deps.services.config.adminToken;
  if (adminToken) app.use(adminQueues(adminToken, deps.services.queues));
  app.use(oauthRoutes(deps));

  const authenticated = [authenticate(deps.services), rateLimit(deps.limiter)];
  const recordUse = recordKeyUse(deps.services);
  rememberValidatorRoutes();
  const validator = OpenApiValidator.middleware({
    apiSpec: OPENAPI_PATH,
    validateRequests: { allowUnknownQueryParameters: false, coerceTypes: false, allErrors: true },
    validateResponses: false,
    validateSecurity: false,
    validateFormats: true,
    ignoreUndocumented: false,
  });

  const document = loadOpenApiDocument();
  for (const route of routes) {
    const declared = access.get(route)!;
    const chain: RequestHandler[] = declared === 'public' ? [] : [...authenticated, requireAccess(declared), recordUse];
    if (RAW_BODY_ROUTES.has(`${route.method.toUpperCase()} ${route.path}`)) {
      app[route.method](route.path, express.raw({ type: () => true, limit: '1mb' }), ...chain, route.handler(deps));
      continue;
    }
    const body = takesBody(document, route.method, route.path) ? [jsonBody] : [];
    const guard = refuseUnstorableInput(integerQueryParameters(document, route.method, route.path));
    app[route.method](route.path, ...body, ...chain, guard, ...validator, route.handler(deps));
  }
  app.use(mcpRoutes(deps));
  app.use(methodNotAllowed(routes));
  app.use(notFound);
  app.use(renderErrors(deps.services.log));
  return app;
}
