import express, { type RequestHandler } from 'express';
import { revocationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/revoke.js';
import type { AppDeps } from '../deps';
import type { OAuthKit } from '../oauth/kit';

/** POST /oauth/revoke — RFC 7009: 200 whatever the token; a refresh token revokes its grant, an access token itself. */
export const revokeOAuthToken = (_deps: AppDeps, kit: OAuthKit): RequestHandler[] => [
  kit.limiter.guard('revoke'),
  express.json({ limit: '16kb' }),
  revocationHandler({ provider: kit.provider, rateLimit: false }),
];
