import type { RequestHandler } from 'express';
import { metadataHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/metadata.js';
import type { AppDeps } from '../deps';
import { protectedResourceMetadata } from '../oauth/metadata';

/** GET /.well-known/oauth-protected-resource/mcp — the same RFC 9728 document, at the path RFC 9728 3.1 derives from `{APP_URL}/mcp`. */
export const getMcpProtectedResourceMetadata = ({ services }: AppDeps): RequestHandler[] => [metadataHandler(protectedResourceMetadata(services.config.appUrl))];
