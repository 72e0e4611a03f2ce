import { metadataHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/metadata.js';
import { protectedResourceMetadata } from '../oauth/metadata';
import { route } from './route';

/** GET /.well-known/oauth-protected-resource/mcp — the same RFC 9728 document, at the path RFC 9728 3.1 derives from `{APP_URL}/mcp`. */
export const getMcpProtectedResourceMetadata = route('getMcpProtectedResourceMetadata', {
  access: 'public',
  protocol: 'oauth',
  handlers: ({ services }) => [metadataHandler(protectedResourceMetadata(services.config.appUrl))],
});
