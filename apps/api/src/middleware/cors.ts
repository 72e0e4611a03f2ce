import cors from 'cors';
import type { RequestHandler } from 'express';

/** Request headers a browser caller may send (beyond the CORS-safelisted ones). */
export const CORS_REQUEST_HEADERS = [
  'Authorization',
  'Cache-Control',
  'Content-Type',
  'Idempotency-Key',
  'If-None-Match',
  // A browser-based MCP client names the protocol revision on each call to /mcp (and a session,
  // which this stateless server never issues).
  'Mcp-Protocol-Version',
  'Mcp-Session-Id',
  'X-API-Key',
  'X-CSRF-Token',
  'X-Request-ID',
  'X-Workspace-ID',
];

/** Response headers a browser caller may read (beyond the CORS-safelisted ones). */
export const CORS_EXPOSED_HEADERS = [
  'Content-Disposition',
  'ETag',
  'Link',
  'Location',
  'Mcp-Session-Id',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'Retry-After',
  'X-Request-ID',
];

/** How long a browser may reuse a preflight's answer, in seconds. */
const PREFLIGHT_MAX_AGE = 600;

/**
 * CORS for the origins of CORS_ORIGINS (the `cors` package), with credentials: the session
 * cookie and the CSRF token work from those front ends. A request from any other origin gets
 * no Access-Control-* header and goes on as it would without CORS (a browser then keeps the
 * answer from the page; a preflight meets 405 method_not_allowed or 404). An allowed
 * preflight (OPTIONS with Access-Control-Request-Method) answers 204 at once. Every answer
 * varies by Origin, so a shared cache never hands one origin's answer to another.
 */
export function corsFor(origins: readonly string[]): RequestHandler {
  const allowed = new Set(origins);
  const handle = cors({
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin)),
    credentials: true,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: CORS_REQUEST_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE,
    optionsSuccessStatus: 204,
  });
  return (req, res, next) => {
    res.vary('Origin');
    const preflight = req.method === 'OPTIONS' && req.get('access-control-request-method') !== undefined;
    if (req.method === 'OPTIONS' && !preflight) {
      next();
      return;
    }
    handle(req, res, next);
  };
}
