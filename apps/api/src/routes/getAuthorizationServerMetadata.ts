import { metadataHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/metadata.js';
import { authorizationServerMetadata } from '../oauth/metadata';
import { route } from './route';

/** GET /.well-known/oauth-authorization-server — RFC 8414, open to any origin (the SDK's handler, with CORS). */
export const getAuthorizationServerMetadata = route('getAuthorizationServerMetadata', {
  access: 'public',
  protocol: 'oauth',
  handlers: ({ services }) => [metadataHandler(authorizationServerMetadata(services.config.appUrl))],
});
