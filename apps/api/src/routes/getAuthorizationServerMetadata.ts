import type { RequestHandler } from 'express';
import { metadataHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/metadata.js';
import type { AppDeps } from '../deps';
import { authorizationServerMetadata } from '../oauth/metadata';

/** GET /.well-known/oauth-authorization-server — RFC 8414, open to any origin (the SDK's handler, with CORS). */
export const getAuthorizationServerMetadata = ({ services }: AppDeps): RequestHandler[] => [metadataHandler(authorizationServerMetadata(services.config.appUrl))];
