import express, { type ErrorRequestHandler, type RequestHandler, type Router } from 'express';
import type { AppDeps } from '../deps';
import { accessOf } from '../routes/access';
import { authorizeOAuthClient } from '../routes/authorizeOAuthClient';
import { createOAuthToken } from '../routes/createOAuthToken';
import { getAuthorizationServerMetadata } from '../routes/getAuthorizationServerMetadata';
import { getMcpProtectedResourceMetadata } from '../routes/getMcpProtectedResourceMetadata';
import { getProtectedResourceMetadata } from '../routes/getProtectedResourceMetadata';
import { registerOAuthClient } from '../routes/registerOAuthClient';
import { revokeOAuthToken } from '../routes/revokeOAuthToken';
import type { OAuthKit } from './kit';
import { OAuthLimiter } from './limits';
import { SdxOAuthProvider } from './provider';

/** An OAuth protocol route: its own body parsing, limits and RFC 6749 error bodies (not the /v1 chain of app.ts). */
export interface OAuthRoute {
  method: 'get' | 'post';
  path: string;
  handler: (deps: AppDeps, kit: OAuthKit) => RequestHandler[];
}

/**
 * The OAuth 2.1 authorization server and protected-resource metadata (extensions-2.md 3), by
 * operationId of openapi.yaml; each declares `public` access in routes/access.ts. The consent
 * itself (POST /v1/oauth/consent, session + CSRF) is a /v1 route of routes/index.ts.
 */
export const OAUTH_ROUTES: OAuthRoute[] = [
  { method: 'get', path: '/.well-known/oauth-protected-resource/mcp', handler: getMcpProtectedResourceMetadata },
  { method: 'get', path: '/.well-known/oauth-protected-resource', handler: getProtectedResourceMetadata },
  { method: 'get', path: '/.well-known/oauth-authorization-server', handler: getAuthorizationServerMetadata },
  { method: 'post', path: '/oauth/register', handler: registerOAuthClient },
  { method: 'get', path: '/oauth/authorize', handler: authorizeOAuthClient },
  { method: 'post', path: '/oauth/token', handler: createOAuthToken },
  { method: 'post', path: '/oauth/revoke', handler: revokeOAuthToken },
];

/** A body the parser refuses (malformed 400, too large 413, another charset 415) is an RFC 6749 `invalid_request`, not the /v1 error body. */
const bodyErrors: ErrorRequestHandler = (err: { status?: number; type?: string; message?: string }, _req, res, next) => {
  const status = err?.status;
  if (res.headersSent || typeof err?.type !== 'string' || typeof status !== 'number' || status < 400 || status >= 500) {
    next(err);
    return;
  }
  res.status(status === 413 || status === 415 ? status : 400).set('Cache-Control', 'no-store').json({ error: 'invalid_request', error_description: `The request body could not be read: ${err.message ?? err.type}.` });
};

/**
 * The OAuth endpoints as one router, mounted by app.ts. The SDK's handlers (@modelcontextprotocol/sdk
 * server/auth) do the protocol: PKCE S256 only, registered redirect URIs, CORS open to any
 * origin on the metadata, registration, token and revocation endpoints (browser-based agents
 * call them); their in-memory limiter is off, ours (Redis, per client address) is on.
 */
export function oauthRoutes(deps: AppDeps): Router {
  const config = deps.services.config;
  const kit: OAuthKit = { provider: new SdxOAuthProvider(deps.services, config.appUrl), limiter: new OAuthLimiter(deps.redis, config.redisPrefix) };
  const router = express.Router();
  for (const route of OAUTH_ROUTES) {
    if (accessOf(route) !== 'public') throw new Error(`${route.method.toUpperCase()} ${route.path}: an OAuth protocol route is public`);
    router.use(route.path, ...route.handler(deps, kit));
  }
  router.use(bodyErrors);
  return router;
}
