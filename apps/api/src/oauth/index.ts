import express, { type ErrorRequestHandler, type Router } from 'express';
import type { AppDeps } from '../deps';
import { labelOf, type Route } from '../routes/route';

/** A body the parser refuses (malformed 400, too large 413, another charset 415) is an RFC 6749 `invalid_request`, not the /v1 error body. */
const bodyErrors: ErrorRequestHandler = (err: { status?: number; type?: string; message?: string }, _req, res, next) => {
  const status = err?.status;
  if (res.headersSent || typeof err?.type !== 'string' || typeof status !== 'number' || status < 400 || status >= 500) {
    next(err);
    return;
  }
  res
    .status(status === 413 || status === 415 ? status : 400)
    .set('Cache-Control', 'no-store')
    .json({ error: 'invalid_request', error_description: `The request body could not be read: ${err.message ?? err.type}.` });
};

/**
 * The OAuth 2.1 authorization server and protected-resource metadata (extensions-2.md 3) as one
 * router, mounted by app.ts: the routes declared `protocol: 'oauth'` (routes/getProtectedResourceMetadata.ts,
 * registerOAuthClient.ts, createOAuthToken.ts, ...), each public, each mounted on its path for
 * every method (the SDK's handlers answer OPTIONS and refuse other methods themselves). The
 * SDK's handlers (@modelcontextprotocol/sdk server/auth) do the protocol: PKCE S256 only,
 * registered redirect URIs, CORS open to any origin on the metadata, registration, token and
 * revocation endpoints (browser-based agents call them); their in-memory limiter is off, ours
 * (Redis, per client address) is on. The consent itself (POST /v1/oauth/consent, session +
 * CSRF) is a /v1 route.
 */
export function oauthRoutes(deps: AppDeps, routes: readonly Route[]): Router {
  const router = express.Router();
  for (const route of routes) {
    if (route.reads !== 'oauth') continue;
    if (route.access !== 'public') throw new Error(`${labelOf(route)}: an OAuth protocol route is public`);
    router.use(route.path, ...route.handlers(deps));
  }
  router.use(bodyErrors);
  return router;
}
