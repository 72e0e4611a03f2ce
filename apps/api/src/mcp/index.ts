import express, { type ErrorRequestHandler, type RequestHandler, Router } from 'express';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ApiError } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { authenticate, presentedKey, recordKeyUse } from '../middleware/auth';
import { MAX_JSON_BYTES } from '../middleware/input';
import { rateLimit, rateLimitExceeded, takeRatePoint } from '../middleware/rate-limit';
import { tenantOf } from '../middleware/tenant';
import { mcpServer, type RateLimited } from './server';
import { requireAccess } from '../middleware/access';
import { labelOf, type Route } from '../routes/route';

/** The path of the MCP endpoint: the protected resource of extensions-2.md 3 is `{APP_URL}/mcp`. */
export const MCP_PATH = '/mcp';

/** The Host values a request may carry: APP_URL's, and the loopback forms of the port it arrived on. */
function allowedHosts(appUrl: string, localPort: number | undefined): string[] {
  const hosts = [new URL(appUrl).host];
  if (localPort !== undefined) hosts.push(`localhost:${localPort}`, `127.0.0.1:${localPort}`, `[::1]:${localPort}`);
  return hosts;
}

/** A JSON-RPC error answer, as the SDK's transport writes its own. */
function rpcError(status: number, message: string, headers: Record<string, string> = {}, code = -32000): RequestHandler {
  return (_req, res) => {
    res.status(status).set(headers).json({ jsonrpc: '2.0', error: { code, message }, id: null });
  };
}

/** The raw body of a POST, up to MAX_JSON_BYTES (the transport's own bound). */
const rawBody = express.raw({ type: () => true, limit: MAX_JSON_BYTES });

/** A body that is not JSON: kept apart from any message, so the POST still takes its point first. */
const UNPARSED = Symbol('unparsed');

/**
 * Reads and parses the POST's body before anything runs (the transport then takes it parsed),
 * so the message is known when its rate-limit point is taken. A body too large is 413, as the
 * transport answers it.
 */
const readMessage: RequestHandler = (req, res, next) => {
  rawBody(req, res, (error?: unknown) => {
    if (error) {
      const status = (error as { status?: number }).status === 413 ? 413 : 400;
      rpcError(
        status,
        status === 413 ? `Payload too large: the body exceeds ${MAX_JSON_BYTES} bytes.` : 'Parse error: could not read the body.',
      )(req, res, next);
      return;
    }
    try {
      res.locals.mcpMessage = JSON.parse(Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '') as unknown;
    } catch {
      res.locals.mcpMessage = UNPARSED;
    }
    next();
  });
};

/** Whether the message is a tools/call request (it has an id, so it is answered). */
function isToolCall(message: unknown): boolean {
  if (typeof message !== 'object' || message === null) return false;
  const { method, id } = message as { method?: unknown; id?: unknown };
  return method === 'tools/call' && (typeof id === 'string' || typeof id === 'number');
}

/** What the /mcp operations of one app share: their authentication chains and the 401 challenge. */
interface McpChains {
  authenticated: RequestHandler[];
  post: RequestHandler[];
  challenged: ErrorRequestHandler;
}

const chainsOf = new WeakMap<AppDeps, McpChains>();

/**
 * `/mcp`: the Model Context Protocol over Streamable HTTP (extensions-2.md 3), stateless. Each
 * POST gets its own server and transport (mcp/server.ts), so any API process answers any call
 * and concurrent calls share nothing; a tools/call the client accepts as an event stream is
 * answered as one, carrying its progress notifications. GET (the server-sent stream of a
 * session) and DELETE (a session's end) are 405: there are no sessions.
 *
 * The request passes what every authenticated REST request passes: the caller resolved by
 * middleware/auth.ts (an API key or OAuth access token only: a session cookie is not a
 * credential here), one point of the rate limit per POST (one message: batches are refused),
 * the key's last use; the role is checked per tool against
 * its REST route's declared access. A missing or refused credential is 401 with
 * `WWW-Authenticate: Bearer resource_metadata=...`, where an agent finds how to sign in. The
 * SDK's DNS-rebinding protection stays on: Host must be APP_URL's (or a loopback form of the
 * port), Origin, when sent, APP_URL's or one of CORS_ORIGINS.
 */
function mcpChains(deps: AppDeps): McpChains {
  const made = chainsOf.get(deps);
  if (made) return made;
  const config = deps.services.config;
  const challenge = `Bearer resource_metadata="${config.appUrl}/.well-known/oauth-protected-resource"`;
  const allowedOrigins = [new URL(config.appUrl).origin, ...config.corsOrigins];

  const keyOnly: RequestHandler = (req, _res, next) => {
    if (!presentedKey(req.headers))
      throw new ApiError(
        'missing_authentication',
        'Send an API key or OAuth access token as Authorization: Bearer <token>, or in X-API-Key.',
      );
    next();
  };
  const challenged: ErrorRequestHandler = (err, _req, res, next) => {
    if (err instanceof ApiError && err.status === 401) res.setHeader('WWW-Authenticate', challenge);
    next(err);
  };
  const recordUse = recordKeyUse(deps.services);
  const authenticated = [keyOnly, authenticate(deps.services), rateLimit(deps.limiter), recordUse];

  /**
   * One point of the workspace's per-minute limit per POST, like one REST request. Past the
   * limit, a tools/call goes on to be answered with a tool error (the tool does not run: see
   * mcp/server.ts) that an agent reads like any other; any other message is 429 with
   * Retry-After. Only a POST the limiter let through records the key's use.
   */
  const counted: RequestHandler = async (req, res, next) => {
    const point = await takeRatePoint(deps.limiter, res);
    const message = res.locals.mcpMessage as unknown;
    // A JSON-RPC batch (an array) is refused whole, nothing run (extensions-3.md 1): each POST
    // carries one message, so one point stands for one tool call at most.
    if (Array.isArray(message)) {
      rpcError(400, 'Invalid Request: JSON-RPC batches are not accepted; send one message per POST.', {}, -32600)(req, res, next);
      return;
    }
    if (message === UNPARSED) {
      rpcError(400, 'Parse error: Invalid JSON', {}, -32700)(req, res, next);
      return;
    }
    if (point.allowed) {
      recordUse(req, res, next);
      return;
    }
    if (!isToolCall(message)) throw rateLimitExceeded(point);
    res.locals.mcpLimited = { limit: point.limit, retryAfter: point.retryAfter } satisfies RateLimited;
    next();
  };

  const serve: RequestHandler = async (req, res) => {
    const limited = res.locals.mcpLimited as RateLimited | undefined;
    const server = mcpServer({ deps, tenant: tenantOf(res), req, res, ...(limited ? { limited } : {}) });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableDnsRebindingProtection: true,
      allowedHosts: allowedHosts(config.appUrl, req.socket.localPort),
      allowedOrigins,
      maxRequestBodySize: MAX_JSON_BYTES,
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, res.locals.mcpMessage);
  };

  const chains: McpChains = {
    authenticated,
    post: [keyOnly, authenticate(deps.services), readMessage, counted, serve],
    challenged,
  };
  chainsOf.set(deps, chains);
  return chains;
}

/** POST /mcp (postMcpMessage): one JSON-RPC message, answered by a server and transport of its own. */
export const mcpMessage = (deps: AppDeps): RequestHandler[] => mcpChains(deps).post;

/** GET /mcp (openMcpStream): 405 once authenticated, there is no session's stream. */
export const mcpNoStream = (deps: AppDeps): RequestHandler[] => [
  ...mcpChains(deps).authenticated,
  rpcError(405, 'Method not allowed: this server is stateless (no event stream to open).', { Allow: 'POST' }),
];

/** DELETE /mcp (endMcpSession): 405 once authenticated, there is no session to end. */
export const mcpNoSession = (deps: AppDeps): RequestHandler[] => [
  ...mcpChains(deps).authenticated,
  rpcError(405, 'Method not allowed: this server is stateless (no session to end).', { Allow: 'POST' }),
];

/**
 * The router of `/mcp`, mounted by app.ts after the /v1 routes: the routes declared with
 * `protocol: 'mcp'` (routes/postMcpMessage.ts, openMcpStream.ts, endMcpSession.ts), each
 * after its declared access, then 405 for any other method and the 401 challenge.
 */
export function mcpRoutes(deps: AppDeps, routes: readonly Route[]): Router {
  const router = Router();
  for (const route of routes) {
    if (route.reads !== 'mcp') continue;
    if (route.path !== MCP_PATH) throw new Error(`${labelOf(route)}: an MCP route is served at ${MCP_PATH}`);
    const [keyOnly, authenticated, ...rest] = route.handlers(deps);
    // Right after authentication (each chain's first two handlers), the declared access, as on every /v1 route.
    const access = route.access === 'public' ? [] : [requireAccess(route.access)];
    router[route.method](MCP_PATH, keyOnly, authenticated, ...access, ...rest);
  }
  router.all(MCP_PATH, rpcError(405, 'Method not allowed.', { Allow: 'POST' }));
  router.use(MCP_PATH, mcpChains(deps).challenged);
  return router;
}
