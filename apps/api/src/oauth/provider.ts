import type { Response } from 'express';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import {
  CustomOAuthError,
  InvalidGrantError,
  InvalidRequestError,
  InvalidScopeError,
  InvalidTargetError,
  InvalidTokenError,
} from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { AuthorizationParams, OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { OAuthClientInformationFull, OAuthTokenRevocationRequest, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import {
  codeChallengeOf,
  createOAuthClient,
  exchangeCode,
  findOAuthClient,
  MAX_REDIRECT_URIS,
  type OAuthGrantResult,
  redirectUriProblem,
  refreshTokens,
  renderClient,
  revokeClientToken,
  type Services,
} from '@sdx/domain/api';
import { resourceOf } from './metadata';

/** Where /oauth/authorize sends the browser: the console's consent page (apps/console). */
export const CONSENT_PAGE = '/console/oauth/consent';
/** RFC 7636 4.1: a code challenge (S256: base64url of a SHA-256, 43 characters) is 43 to 128 unreserved characters. */
const CODE_CHALLENGE = /^[A-Za-z0-9\-._~]{43,128}$/;
const CLIENT_NAME_MAX = 200;
const STATE_MAX = 2000;
const SCOPE_MAX = 500;

function tokensOf(result: OAuthGrantResult): OAuthTokens {
  if (result.ok) return result.tokens;
  throw result.error === 'invalid_scope' ? new InvalidScopeError(result.description) : new InvalidGrantError(result.description);
}

/**
 * The SDK's OAuthServerProvider on the domain (packages/domain/src/oauth): the SDK's handlers
 * parse and check the protocol (PKCE S256 only, the redirect URI registered, RFC 6749 error
 * bodies); clients, codes and tokens are ours, in Postgres.
 */
export class SdxOAuthProvider implements OAuthServerProvider {
  readonly clientsStore: OAuthRegisteredClientsStore;

  constructor(
    private readonly services: Services,
    private readonly appUrl: string,
  ) {
    const { db } = services;
    this.clientsStore = {
      getClient: async (clientId) => {
        const row = await findOAuthClient(db, clientId);
        return row ? renderClient(row) : undefined;
      },
      // Public clients only: a secret the SDK drew for a client that asked for one is dropped,
      // and the answer says `none` (RFC 7591 3.2.1 lets the server replace what was asked).
      registerClient: async (client) => {
        const redirectUris = client.redirect_uris.map(String);
        if (redirectUris.length === 0 || redirectUris.length > MAX_REDIRECT_URIS) {
          throw new CustomOAuthError('invalid_redirect_uri', `Register 1 to ${MAX_REDIRECT_URIS} redirect URIs.`);
        }
        for (const uri of redirectUris) {
          const problem = redirectUriProblem(uri);
          if (problem)
            throw new CustomOAuthError('invalid_redirect_uri', `The redirect URI ${JSON.stringify(uri.slice(0, 200))} ${problem}.`);
        }
        const grantTypes = client.grant_types ?? ['authorization_code', 'refresh_token'];
        if (grantTypes.some((grant) => grant !== 'authorization_code' && grant !== 'refresh_token')) {
          throw new CustomOAuthError('invalid_client_metadata', 'Only the authorization_code and refresh_token grants are supported.');
        }
        const {
          client_secret: _secret,
          client_secret_expires_at: _expiry,
          client_id: _id,
          client_id_issued_at: _issued,
          ...metadata
        } = client as OAuthClientInformationFull;
        const name = typeof client.client_name === 'string' ? client.client_name.slice(0, CLIENT_NAME_MAX) : null;
        return await createOAuthClient(db, {
          client_name: name,
          redirect_uris: redirectUris,
          metadata: { ...metadata, redirect_uris: undefined, client_name: undefined },
        });
      },
    };
  }

  /** The client and redirect URI are checked by the SDK; the rest goes to the console's consent page, where the user picks the workspace and role. */
  authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: Response): Promise<void> {
    if (!CODE_CHALLENGE.test(params.codeChallenge))
      return Promise.reject(
        new InvalidRequestError('code_challenge must be 43 to 128 characters of A-Z, a-z, 0-9, -, ., _ and ~ (RFC 7636).'),
      );
    // What the consent page carries back to POST /v1/oauth/consent must fit its bounds.
    if ((params.state?.length ?? 0) > STATE_MAX)
      return Promise.reject(new InvalidRequestError(`state may be at most ${STATE_MAX} characters.`));
    if ((params.scopes ?? []).join(' ').length > SCOPE_MAX)
      return Promise.reject(new InvalidRequestError(`scope may be at most ${SCOPE_MAX} characters.`));
    if (params.resource && params.resource.href.replace(/\/$/, '') !== resourceOf(this.appUrl)) {
      return Promise.reject(new InvalidTargetError(`The only resource this server grants access to is ${resourceOf(this.appUrl)}.`));
    }
    const query = new URLSearchParams({
      client_id: client.client_id,
      client_name: client.client_name ?? client.client_id,
      redirect_uri: params.redirectUri,
      code_challenge: params.codeChallenge,
      code_challenge_method: 'S256',
    });
    if (params.state !== undefined) query.set('state', params.state);
    if (params.scopes && params.scopes.length > 0) query.set('scope', params.scopes.join(' '));
    res.redirect(302, `${CONSENT_PAGE}?${query.toString()}`);
    return Promise.resolve();
  }

  async challengeForAuthorizationCode(client: OAuthClientInformationFull, code: string): Promise<string> {
    const challenge = await codeChallengeOf(this.services.db, client.client_id, code, this.services.clock.now());
    if (!challenge) throw new InvalidGrantError('The authorization code is unknown or has expired.');
    return challenge;
  }

  async exchangeAuthorizationCode(
    client: OAuthClientInformationFull,
    code: string,
    _verifier?: string,
    redirectUri?: string,
  ): Promise<OAuthTokens> {
    return tokensOf(await exchangeCode(this.services.db, { clientId: client.client_id, code, redirectUri }, this.services.clock.now()));
  }

  async exchangeRefreshToken(client: OAuthClientInformationFull, refreshToken: string, scopes?: string[]): Promise<OAuthTokens> {
    return tokensOf(await refreshTokens(this.services.db, { clientId: client.client_id, refreshToken, scopes }, this.services.clock.now()));
  }

  /** What the SDK's bearer middleware would ask; /mcp authenticates through middleware/auth.ts instead, with the same lookup. */
  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const found = await this.services.keys.authenticate(token);
    if (!found || found.key.kind !== 'oauth') throw new InvalidTokenError('The access token is unknown, expired or revoked.');
    return { token, clientId: found.key.oauth_client_id ?? '', scopes: [], resource: new URL(resourceOf(this.appUrl)) };
  }

  async revokeToken(client: OAuthClientInformationFull, request: OAuthTokenRevocationRequest): Promise<void> {
    await revokeClientToken(this.services.db, { clientId: client.client_id, token: request.token, ip: null }, this.services.clock.now());
  }
}
