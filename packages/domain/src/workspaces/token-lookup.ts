import { sql } from 'kysely';
import type { Db } from '@sdx/db';

/**
 * OAuth tokens (extensions-2.md 3): an access token is `sdx_oat_` and a refresh token
 * `sdx_ort_`, each followed by 40 random base62 characters; only their SHA-256 hashes are
 * stored (oauth_tokens). This file is what the key lookup needs of them, and imports no other
 * domain file, so workspaces/api-keys.ts and key-lookup.ts can use it without a cycle.
 */
export const OAUTH_ACCESS_PREFIX = 'sdx_oat_';
export const OAUTH_REFRESH_PREFIX = 'sdx_ort_';

/**
 * The keys of the unretired access tokens among `hashes`, shaped as workspaces/key-lookup.ts `lookupKeys`
 * unites them with the keys found by secret hash: one statement for both. Expiry is checked by
 * the caller against the returned `token_expires_at`, a revoked grant by its key's revoked_at.
 */
export function activeAccessTokens(db: Db, hashes: string[]) {
  return db
    .selectFrom('oauth_tokens')
    .select(['key_id as matched_key_id', 'token_hash as presented', sql<Date | null>`expires_at`.as('token_expires_at')])
    .where('token_hash', 'in', hashes)
    .where('kind', '=', 'access')
    .where('retired_at', 'is', null);
}
