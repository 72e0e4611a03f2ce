import express, { type Express, type RequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { loadOpenApiDocument } from '@sdx/contract';
import { wakeOverRedis } from '@sdx/runtime';
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
import { requestsOnly, skipUnusedSpecValidator } from './middleware/validator-start';
import { ROUTES } from './routes';
import type { Route } from './routes/route';
import { LiveHub } from './live/hub';
import { oauthRoutes } from './oauth';
import { mcpRoutes } from './mcp';

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
 * in size and depth; a `rawBody` route's exact bytes instead, checked by the route, not the
 * validator) → authentication (caller and workspace resolved once) → rate limit → the route's
 * declared access → input Postgres cannot store refused → request validation against
 * openapi.yaml → route → one error renderer. Every route is declared with `route()`
 * (routes/route.ts): operationId, access and handler in one place. The web console's files answer at
 * /console (middleware/console.ts). With ADMIN_TOKEN set, Bull Board answers at /admin/queues behind
 * that token. The routes declared `protocol: 'oauth'` (/.well-known/*, /oauth/*: oauth/index.ts) come
 * before the others with their own body parsing and RFC 6749 errors; those of `protocol: 'mcp'`
 * (/mcp: mcp/index.ts) after them, with the same authentication and rate limit and each tool's
 * REST route's access.
 */
export function createApp(apiDeps: ApiDeps, routes: readonly Route[] = ROUTES): Express {
  const config = apiDeps.services.config;
  const deps: AppDeps = {
    ...apiDeps,
    loginLimiter: apiDeps.loginLimiter ?? new LoginLimiter(apiDeps.redis, config.redisPrefix, config.signupLimitPerHour),
    mailer: apiDeps.mailer !== undefined ? apiDeps.mailer : wakeOverRedis(apiDeps.redis, config.redisPrefix, 'mail'),
    heavyReads: apiDeps.heavyReads ?? new HeavyReads(config.heavyReadsPerWorkspace, config.heavyReadMinItems),
    live:
      apiDeps.live ??
      new LiveHub({
        db: apiDeps.services.db,
        redisUrl: config.redisUrl,
        redisClusterNodes: config.redisClusterNodes,
        prefix: config.redisPrefix,
        log: apiDeps.services.log,
      }),
  };
  // A draining process ends its live streams: their clients reconnect to another process.
  apiDeps.draining?.addEventListener('abort', () => void deps.live.close(), { once: true });
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
  app.use(oauthRoutes(deps, routes));

  // Routes of the signed-in user (session access, and the list of their workspaces) do not act on a workspace: its require_two_factor does not refuse them.
  const authenticated = authenticate(deps.services);
  const ownAuthenticated = authenticate(deps.services, { actsOnWorkspace: false });
  const limited = rateLimit(deps.limiter);
  const recordUse = recordKeyUse(deps.services);
  rememberValidatorRoutes();
  skipUnusedSpecValidator();
  const document = loadOpenApiDocument();
  const validator = OpenApiValidator.middleware({
    // A copy of its own (the validator rewrites the document it is given), with the requests
    // only (validator-start.ts).
    apiSpec: requestsOnly(loadOpenApiDocument()),
    validateRequests: { allowUnknownQueryParameters: false, coerceTypes: false, allErrors: true },
    validateResponses: false,
    validateSecurity: false,
    validateFormats: true,
    // The document is checked against OpenAPI 3 by CI (redocly lint, packages/contract/test),
    // not again by each process that starts (validator-start.ts).
    validateApiSpec: false,
    ignoreUndocumented: false,
  });

  const apiRoutes = routes.filter((route) => route.reads === 'json' || route.reads === 'raw');
  for (const route of apiRoutes) {
    const chain: RequestHandler[] =
      route.access === 'public'
        ? []
        : [route.actsOnWorkspace ? authenticated : ownAuthenticated, limited, requireAccess(route.access), recordUse];
    if (route.reads === 'raw') {
      app[route.method](route.path, express.raw({ type: () => true, limit: '1mb' }), ...chain, ...route.handlers(deps));
      continue;
    }
    const body = takesBody(document, route.method, route.path) ? [jsonBody] : [];
    const guard = refuseUnstorableInput(integerQueryParameters(document, route.method, route.path));
    app[route.method](route.path, ...body, ...chain, guard, ...validator, ...route.handlers(deps));
  }
  app.use(mcpRoutes(deps, routes));
  app.use(methodNotAllowed(apiRoutes));
  app.use(notFound);
  app.use(renderErrors(deps.services.log));
  return app;
}
