import express from 'express';
import { revocationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/revoke.js';
import { oauthKit } from '../oauth/kit';
import { route } from './route';

/** POST /oauth/revoke — RFC 7009: 200 whatever the token; a refresh token revokes its grant, an access token itself. */
export const revokeOAuthToken = route('revokeOAuthToken', {
  access: 'public',
  protocol: 'oauth',
  handlers: (deps) => {
    const kit = oauthKit(deps);
    return [kit.limiter.guard('revoke'), express.json({ limit: '16kb' }), revocationHandler({ provider: kit.provider, rateLimit: false })];
  },
});
