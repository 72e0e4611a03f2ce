import type { Executor, Tx } from '@sdx/db';
import { systemActor, type Actor } from '../audit/audit';
import { inTransaction } from '../tx';
import { hashApiKey, revokeApiKey } from '../workspaces/api-keys';
import { DEFAULT_OAUTH_SCOPE, randomSecret } from './consent';
import { OAUTH_ACCESS_PREFIX, OAUTH_REFRESH_PREFIX } from '../workspaces/token-lookup';

/** Access tokens last an hour (extensions-2.md 3). */
export const ACCESS_TOKEN_TTL_SECONDS = 3600;
/** A refresh token lasts 30 days; each use gives a new one (rotation), so a used grant never lapses. */
export const REFRESH_TOKEN_TTL_SECONDS = 30 * 86_400;

/** The token response of RFC 6749 5.1. */
export interface OAuthTokenSet {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/** An RFC 6749 5.2 error the token endpoint answers. */
export interface OAuthGrantFailure {
  error: 'invalid_grant' | 'invalid_scope';
  description: string;
}

export type OAuthGrantResult = { ok: true; tokens: OAuthTokenSet } | ({ ok: false } & OAuthGrantFailure);

const fail = (description: string, error: OAuthGrantFailure['error'] = 'invalid_grant'): OAuthGrantResult => ({
  ok: false,
  error,
  description,
});

/** Issues an access token and a refresh token of the grant `keyId`. */
async function issueTokens(tx: Tx, keyId: string, scope: string, now: Date): Promise<OAuthTokenSet> {
  const access = randomSecret(OAUTH_ACCESS_PREFIX, 40);
  const refresh = randomSecret(OAUTH_REFRESH_PREFIX, 40);
  const at = (seconds: number) => new Date(now.getTime() + seconds * 1000);
  await tx
    .insertInto('oauth_tokens')
    .values([
      { token_hash: hashApiKey(access), key_id: keyId, kind: 'access', scope, created_at: now, expires_at: at(ACCESS_TOKEN_TTL_SECONDS) },
      {
        token_hash: hashApiKey(refresh),
        key_id: keyId,
        kind: 'refresh',
        scope,
        created_at: now,
        expires_at: at(REFRESH_TOKEN_TTL_SECONDS),
      },
    ])
    .execute();
  return { access_token: access, token_type: 'Bearer', expires_in: ACCESS_TOKEN_TTL_SECONDS, refresh_token: refresh, scope };
}

/** The PKCE challenge of a code of this client that has not expired (used or not: a second use is found, then refused, by exchangeCode), or null. */
export async function codeChallengeOf(db: Executor, clientId: string, code: string, now: Date): Promise<string | null> {
  if (code.length > 200) return null;
  const row = await db
    .selectFrom('oauth_codes')
    .select('code_challenge')
    .where('code_hash', '=', hashApiKey(code))
    .where('client_id', '=', clientId)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row?.code_challenge ?? null;
}

/**
 * The authorization_code grant, once its PKCE verifier has been checked against
 * codeChallengeOf: the code is marked used, its grant made permanent (it expired with the code
 * until now) and a first pair of tokens issued. A code presented a second time revokes the
 * grant it made (RFC 6749 4.1.2, OAuth 2.1 4.1.3): whoever holds it, a leaked code gives nothing.
 */
export async function exchangeCode(
  db: Executor,
  request: { clientId: string; code: string; redirectUri?: string },
  now: Date,
): Promise<OAuthGrantResult> {
  if (request.code.length > 200) return fail('The authorization code is unknown or has expired.');
  return inTransaction(db, async (tx) => {
    const code = await tx
      .selectFrom('oauth_codes')
      .selectAll()
      .where('code_hash', '=', hashApiKey(request.code))
      .where('client_id', '=', request.clientId)
      .forUpdate()
      .executeTakeFirst();
    if (!code || code.expires_at.getTime() <= now.getTime()) return fail('The authorization code is unknown or has expired.');
    if (code.used_at) {
      await revokeApiKey(tx, code.key_id, { actor: systemActor('oauth'), reason: 'authorization_code_reused' });
      return fail('The authorization code was already used; the grant it made is revoked.');
    }
    if (request.redirectUri !== undefined && request.redirectUri !== code.redirect_uri)
      return fail('The redirect_uri differs from the one of the authorization request.');
    await tx.updateTable('oauth_codes').set({ used_at: now }).where('code_hash', '=', code.code_hash).execute();
    const grant = await tx
      .updateTable('api_keys')
      .set({ expires_at: null })
      .where('id', '=', code.key_id)
      .where('revoked_at', 'is', null)
      .returning('id')
      .executeTakeFirst();
    if (!grant) return fail('The grant of this code was revoked.');
    return { ok: true, tokens: await issueTokens(tx, code.key_id, code.scope, now) };
  });
}

/**
 * The refresh_token grant, with rotation: the refresh token is retired and a new pair issued.
 * A retired refresh token presented again means two parties hold it: the grant is revoked
 * (OAuth 2.1 4.3.1, RFC 9700 4.14.2), and every token of it stops working. A narrower scope
 * may be asked; a wider one is refused.
 */
export async function refreshTokens(
  db: Executor,
  request: { clientId: string; refreshToken: string; scopes?: string[] },
  now: Date,
): Promise<OAuthGrantResult> {
  if (request.refreshToken.length > 200 || !request.refreshToken.startsWith(OAUTH_REFRESH_PREFIX))
    return fail('The refresh token is unknown, expired or revoked.');
  return inTransaction(db, async (tx) => {
    const token = await tx
      .selectFrom('oauth_tokens')
      .innerJoin('api_keys', 'api_keys.id', 'oauth_tokens.key_id')
      .select([
        'oauth_tokens.token_hash',
        'oauth_tokens.key_id',
        'oauth_tokens.scope',
        'oauth_tokens.expires_at',
        'oauth_tokens.retired_at',
        'api_keys.revoked_at',
        'api_keys.oauth_client_id',
      ])
      .where('oauth_tokens.token_hash', '=', hashApiKey(request.refreshToken))
      .where('oauth_tokens.kind', '=', 'refresh')
      .forUpdate('oauth_tokens')
      .executeTakeFirst();
    if (!token || token.oauth_client_id !== request.clientId || token.revoked_at)
      return fail('The refresh token is unknown, expired or revoked.');
    if (token.retired_at) {
      await revokeApiKey(tx, token.key_id, { actor: systemActor('oauth'), reason: 'refresh_token_reused' });
      return fail('The refresh token was already used; the grant is revoked. Sign in again.');
    }
    if (token.expires_at.getTime() <= now.getTime()) return fail('The refresh token is unknown, expired or revoked.');
    const granted = token.scope.split(' ');
    const asked = request.scopes?.filter(Boolean) ?? [];
    if (asked.some((scope) => !granted.includes(scope)))
      return fail(`The scope may not exceed the one granted (${token.scope}).`, 'invalid_scope');
    await tx.updateTable('oauth_tokens').set({ retired_at: now }).where('token_hash', '=', token.token_hash).execute();
    return {
      ok: true,
      tokens: await issueTokens(tx, token.key_id, asked.length > 0 ? asked.join(' ') : token.scope || DEFAULT_OAUTH_SCOPE, now),
    };
  });
}

/**
 * RFC 7009 revocation by the client: a refresh token revokes its whole grant (audited
 * `api_key.revoked`, the grant as actor), an access token only itself. A token that is
 * unknown, of another client or already gone changes nothing (the endpoint answers 200 anyway).
 */
export async function revokeClientToken(
  db: Executor,
  request: { clientId: string; token: string; ip: string | null },
  now: Date,
): Promise<void> {
  if (request.token.length > 200) return;
  const token = await db
    .selectFrom('oauth_tokens')
    .innerJoin('api_keys', 'api_keys.id', 'oauth_tokens.key_id')
    .select(['oauth_tokens.token_hash', 'oauth_tokens.key_id', 'oauth_tokens.kind', 'api_keys.oauth_client_id'])
    .where('oauth_tokens.token_hash', '=', hashApiKey(request.token))
    .executeTakeFirst();
  if (!token || token.oauth_client_id !== request.clientId) return;
  if (token.kind === 'refresh') {
    const actor: Actor = { type: 'api_key', id: token.key_id, ip: request.ip };
    await revokeApiKey(db, token.key_id, { actor, reason: 'client_revoked' });
    return;
  }
  await db
    .updateTable('oauth_tokens')
    .set({ retired_at: now })
    .where('token_hash', '=', token.token_hash)
    .where('retired_at', 'is', null)
    .execute();
}
