import type { RequestHandler } from 'express';
import { authorizationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/authorize.js';
import type { AppDeps } from '../deps';
import type { OAuthKit } from '../oauth/kit';

/**
 * GET /oauth/authorize — 302 to the console's consent page. An unknown client or a redirect URI
 * it did not register is answered 400 (JSON) here, never redirected; other faults (no PKCE S256
 * challenge, response_type not `code`) go back to the client's redirect URI as RFC 6749 4.1.2.1 says.
 */
export const authorizeOAuthClient = (_deps: AppDeps, kit: OAuthKit): RequestHandler[] => [kit.limiter.guard('authorize'), authorizationHandler({ provider: kit.provider, rateLimit: false })];
