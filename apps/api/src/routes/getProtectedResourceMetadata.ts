import { metadataHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/metadata.js';
import { protectedResourceMetadata } from '../oauth/metadata';
import { route } from './route';

/** GET /.well-known/oauth-protected-resource — RFC 9728, open to any origin (the SDK's handler, with CORS). */
export const getProtectedResourceMetadata = route('getProtectedResourceMetadata', {
  access: 'public',
  protocol: 'oauth',
  handlers: ({ services }) => [metadataHandler(protectedResourceMetadata(services.config.appUrl))],
});
