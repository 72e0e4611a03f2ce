import { randomInt } from 'node:crypto';
import type { Executor } from '@sdx/db';
import { type Role, roleAtLeast } from '../identity/roles';
import type { Actor } from '../audit/audit';
import { ApiError } from '../errors';
import { inTransaction } from '../tx';
import { createApiKey, hashApiKey } from '../workspaces/api-keys';
import { findOAuthClient, redirectUriMatches } from './clients';

/** An authorization code lasts 10 minutes and is used once (extensions-2.md 3, OAuth 2.1). */
export const AUTHORIZATION_CODE_TTL_MS = 10 * 60_000;
/** The scope a token carries when the client asked none. */
export const DEFAULT_OAUTH_SCOPE = 'mcp';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A random base62 secret of `length` characters after `prefix`. */
export function randomSecret(prefix: string, length: number): string {
  let out = prefix;
  for (let i = 0; i < length; i++) out += BASE62[randomInt(62)];
  return out;
}

export interface ConsentRequest {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  codeChallengeMethod: 'S256';
  state?: string;
  scope?: string;
  workspaceId: string;
  role: Role;
}

/** The signed-in user who consents. */
export interface Consenter {
  userId: string;
  twoFactorEnabled: boolean;
  actor: Actor;
}

/**
 * POST /v1/oauth/consent: the user lets a registered client act in one of their workspaces
 * with a role no higher than theirs. Makes the grant, one API key of kind `oauth` named after
 * the client (audited `api_key.created`, kind oauth, by the user), and an authorization code
 * for it; the grant expires with the code unless the code is exchanged (oauth/tokens.ts), so a
 * consent the agent never completes leaves an expired key, not a live one. Answers where to
 * send the browser: the redirect URI with `code` and `state`.
 */
export async function consentToClient(db: Executor, request: ConsentRequest, user: Consenter, now: Date): Promise<{ redirect_to: string }> {
  const client = await findOAuthClient(db, request.clientId);
  if (!client) throw new ApiError('invalid_request', 'No OAuth client has this client_id; the agent must register again.');
  if (!client.redirect_uris.some((registered) => redirectUriMatches(request.redirectUri, registered))) {
    throw new ApiError('invalid_request', 'The redirect_uri is not one the client registered.');
  }
  const membership = await db
    .selectFrom('memberships')
    .innerJoin('workspaces', 'workspaces.id', 'memberships.workspace_id')
    .select(['memberships.role', 'workspaces.require_two_factor'])
    .where('memberships.workspace_id', '=', request.workspaceId)
    .where('memberships.user_id', '=', user.userId)
    .executeTakeFirst();
  if (!membership) throw new ApiError('workspace_not_found', 'No such workspace among yours.', { workspace_id: request.workspaceId });
  if (membership.require_two_factor && !user.twoFactorEnabled) {
    throw new ApiError('two_factor_required', 'This workspace requires two-factor sign-in: turn it on for your account first.');
  }
  if (!roleAtLeast(membership.role, request.role)) {
    throw new ApiError('forbidden', `An agent's role may not exceed your own role (${membership.role}).`, { required_role: request.role });
  }
  const code = randomSecret('', 43);
  const scope = request.scope?.trim() || DEFAULT_OAUTH_SCOPE;
  const expiresAt = new Date(now.getTime() + AUTHORIZATION_CODE_TTL_MS);
  await inTransaction(db, async (tx) => {
    const grant = await createApiKey(tx, request.workspaceId, client.client_name ?? 'OAuth client', {
      role: request.role,
      createdBy: user.userId,
      grantorRole: membership.role,
      actor: user.actor,
      oauth: { clientId: client.id, clientName: client.client_name, expiresAt },
    });
    await tx
      .insertInto('oauth_codes')
      .values({
        code_hash: hashApiKey(code),
        client_id: client.id,
        key_id: grant.key_id,
        user_id: user.userId,
        workspace_id: request.workspaceId,
        role: request.role,
        redirect_uri: request.redirectUri,
        code_challenge: request.codeChallenge,
        scope,
        expires_at: expiresAt,
      })
      .execute();
  });
  const target = new URL(request.redirectUri);
  target.searchParams.set('code', code);
  if (request.state !== undefined) target.searchParams.set('state', request.state);
  return { redirect_to: target.href };
}
