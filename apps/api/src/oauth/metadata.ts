import type { OAuthMetadata, OAuthProtectedResourceMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { DEFAULT_OAUTH_SCOPE } from '@sdx/domain/api';

/** The protected resource of extensions-2.md 3: the MCP endpoint. */
export const resourceOf = (appUrl: string) => `${appUrl}/mcp`;

/** RFC 9728 protected-resource metadata: the resource, and this service as its authorization server. */
export function protectedResourceMetadata(appUrl: string): OAuthProtectedResourceMetadata {
  return {
    resource: resourceOf(appUrl),
    authorization_servers: [appUrl],
    scopes_supported: [DEFAULT_OAUTH_SCOPE],
    bearer_methods_supported: ['header'],
    resource_name: 'sdx MCP server',
    resource_documentation: `${appUrl}/docs`,
  };
}

/** RFC 8414 authorization-server metadata: public clients, the code flow with PKCE S256 only, rotating refresh tokens. */
export function authorizationServerMetadata(appUrl: string): OAuthMetadata {
  return {
    issuer: appUrl,
    authorization_endpoint: `${appUrl}/oauth/authorize`,
    token_endpoint: `${appUrl}/oauth/token`,
    registration_endpoint: `${appUrl}/oauth/register`,
    revocation_endpoint: `${appUrl}/oauth/revoke`,
    scopes_supported: [DEFAULT_OAUTH_SCOPE],
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    service_documentation: `${appUrl}/docs`,
  };
}
