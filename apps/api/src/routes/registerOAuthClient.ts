import { clientRegistrationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/register.js';
import { oauthKit } from '../oauth/kit';
import { route } from './route';

/** POST /oauth/register — RFC 7591, public clients only; 201 with the client, 400 `invalid_redirect_uri` or `invalid_client_metadata`. */
export const registerOAuthClient = route('registerOAuthClient', {
  access: 'public',
  protocol: 'oauth',
  handlers: (deps) => {
    const kit = oauthKit(deps);
    return [
      kit.limiter.guard('register'),
      clientRegistrationHandler({ clientsStore: kit.provider.clientsStore, rateLimit: false, clientIdGeneration: false }),
    ];
  },
});
