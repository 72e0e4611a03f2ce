import type { RequestHandler } from 'express';
import { metadataHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/metadata.js';
import type { AppDeps } from '../deps';
import { protectedResourceMetadata } from '../oauth/metadata';

/** GET /.well-known/oauth-protected-resource — RFC 9728, open to any origin (the SDK's handler, with CORS). */
export const getProtectedResourceMetadata = ({ services }: AppDeps): RequestHandler[] => [metadataHandler(protectedResourceMetadata(services.config.appUrl))];
