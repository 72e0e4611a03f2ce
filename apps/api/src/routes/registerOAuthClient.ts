import type { RequestHandler } from 'express';
import { clientRegistrationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/register.js';
import type { AppDeps } from '../deps';
import type { OAuthKit } from '../oauth/kit';

/** POST /oauth/register — RFC 7591, public clients only; 201 with the client, 400 `invalid_redirect_uri` or `invalid_client_metadata`. */
export const registerOAuthClient = (_deps: AppDeps, kit: OAuthKit): RequestHandler[] => [
  kit.limiter.guard('register'),
  clientRegistrationHandler({ clientsStore: kit.provider.clientsStore, rateLimit: false, clientIdGeneration: false }),
];
