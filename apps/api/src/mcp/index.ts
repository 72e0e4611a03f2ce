import { type ErrorRequestHandler, type RequestHandler, Router } from 'express';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ApiError } from '@sdx/domain';
import type { AppDeps } from '../deps';
import { authenticate, presentedKey, recordKeyUse } from '../middleware/auth';
import { MAX_JSON_BYTES } from '../middleware/input';
import { rateLimit } from '../middleware/rate-limit';
import { tenantOf } from '../middleware/tenant';
import { mcpServer } from './server';

/** The path of the MCP endpoint: the protected resource of extensions-2.md 3 is `{APP_URL}/mcp`. */
export const MCP_PATH = '/mcp';

/** The Host values a request may carry: APP_URL's, and the loopback forms of the port it arrived on. */
function allowedHosts(appUrl: string, localPort: number | undefined): string[] {
  const hosts = [new URL(appUrl).host];
  if (localPort !== undefined) hosts.push(`localhost:${localPort}`, `127.0.0.1:${localPort}`, `[::1]:${localPort}`);
  return hosts;
}

/** A JSON-RPC error answer, as the SDK's transport writes its own. */
function rpcError(status: number, message: string, headers: Record<string, string> = {}): RequestHandler {
  return (_req, res) => {
    res.status(status).set(headers).json({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
  };
}

/**
 * `/mcp`: the Model Context Protocol over Streamable HTTP (extensions-2.md 3), stateless. Each
 * POST gets its own server and transport (mcp/server.ts), so any API process answers any call
 * and concurrent calls share nothing; a tools/call the client accepts as an event stream is
 * answered as one, carrying its progress notifications. GET (the server-sent stream of a
 * session) and DELETE (a session's end) are 405: there are no sessions.
 *
 * The request passes what every authenticated REST request passes: the caller resolved by
 * middleware/auth.ts (an API key or OAuth access token only: a session cookie is not a
 * credential here), the rate limiter, the key's last use; the role is checked per tool against
 * its REST route's declared access. A missing or refused credential is 401 with
 * `WWW-Authenticate: Bearer resource_metadata=...`, where an agent finds how to sign in. The
 * SDK's DNS-rebinding protection stays on: Host must be APP_URL's (or a loopback form of the
 * port), Origin, when sent, APP_URL's or one of CORS_ORIGINS.
 */
export function mcpRoutes(deps: AppDeps): Router {
  const config = deps.services.config;
  const challenge = `Bearer resource_metadata="${config.appUrl}/.well-known/oauth-protected-resource"`;
  const allowedOrigins = [new URL(config.appUrl).origin, ...config.corsOrigins];

  const keyOnly: RequestHandler = (req, _res, next) => {
    if (!presentedKey(req.headers)) throw new ApiError('missing_authentication', 'Send an API key or OAuth access token as Authorization: Bearer <token>, or in X-API-Key.');
    next();
  };
  const challenged: ErrorRequestHandler = (err, _req, res, next) => {
    if (err instanceof ApiError && err.status === 401) res.setHeader('WWW-Authenticate', challenge);
    next(err);
  };
  const authenticated = [keyOnly, authenticate(deps.services), rateLimit(deps.limiter), recordKeyUse(deps.services)];

  const serve: RequestHandler = async (req, res) => {
    const server = mcpServer({ deps, tenant: tenantOf(res), req, res });
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
    await transport.handleRequest(req, res);
  };

  const router = Router();
  router.post(MCP_PATH, ...authenticated, serve);
  router.get(MCP_PATH, ...authenticated, rpcError(405, 'Method not allowed: this server is stateless (no event stream to open).', { Allow: 'POST' }));
  router.delete(MCP_PATH, ...authenticated, rpcError(405, 'Method not allowed: this server is stateless (no session to end).', { Allow: 'POST' }));
  router.all(MCP_PATH, rpcError(405, 'Method not allowed.', { Allow: 'POST' }));
  router.use(MCP_PATH, challenged);
  return router;
}
