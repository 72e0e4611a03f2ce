import express from 'express';
import { tokenHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/token.js';
import { oauthKit } from '../oauth/kit';
import { route } from './route';

/**
 * POST /oauth/token — the authorization_code (with the PKCE verifier) and refresh_token grants,
 * form-urlencoded as RFC 6749 says, or JSON; errors as RFC 6749 5.2 (`{error, error_description}`).
 */
export const createOAuthToken = route('createOAuthToken', {
  access: 'public',
  protocol: 'oauth',
  handlers: (deps) => {
    const kit = oauthKit(deps);
    return [kit.limiter.guard('token'), express.json({ limit: '16kb' }), tokenHandler({ provider: kit.provider, rateLimit: false })];
  },
});
