import express, { type RequestHandler } from 'express';
import { tokenHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/token.js';
import type { AppDeps } from '../deps';
import type { OAuthKit } from '../oauth/kit';

/**
 * POST /oauth/token — the authorization_code (with the PKCE verifier) and refresh_token grants,
 * form-urlencoded as RFC 6749 says, or JSON; errors as RFC 6749 5.2 (`{error, error_description}`).
 */
export const createOAuthToken = (_deps: AppDeps, kit: OAuthKit): RequestHandler[] => [
  kit.limiter.guard('token'),
  express.json({ limit: '16kb' }),
  tokenHandler({ provider: kit.provider, rateLimit: false }),
];
