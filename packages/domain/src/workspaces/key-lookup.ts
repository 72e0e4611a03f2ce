import { timingSafeEqual } from 'node:crypto';
import { sql } from 'kysely';
import type { ApiKeyKind, ApiKeyRow, Db, WorkspaceRow } from '@sdx/db';
import { GroupCommit, REQUEST_PATH_BOUNDS } from '../group-commit';
import { OAUTH_ACCESS_PREFIX, activeAccessTokens } from './token-lookup';
import { API_KEY_PREFIX, hashApiKey } from './api-keys';

/**
 * The lookup of a presented credential on the request path: an API key (`sdx_live_…`) by its
 * secret's hash, or an OAuth access token (`sdx_oat_…`), which resolves to its grant's key.
 */

export interface AuthenticatedKey {
  key: ApiKeyRow;
  workspace: WorkspaceRow;
}

/** Resolves presented API keys; `services.keys` of every process. */
export interface KeyLookups {
  /** The key and its workspace, or null when the secret is unknown, revoked or expired. */
  authenticate(secret: string): Promise<AuthenticatedKey | null>;
}

/**
 * Resolves a presented secret to its key and workspace. The lookup goes through the hash index
 * and the stored hash is compared in constant time. No cache: a revocation takes effect at once.
 * Lookups that arrive together share one query (lookupKeys, through a group commit bounded as a
 * request path is); each still reads the key as it is after the request arrived.
 */
export class GroupKeyLookups implements KeyLookups {
  private readonly group: GroupCommit<PresentedSecret, FoundKey | null>;

  constructor(db: Db) {
    this.group = new GroupCommit((presented) => lookupKeys(db, presented), { maxBatch: 128, maxInFlight: 4, ...REQUEST_PATH_BOUNDS });
  }

  async authenticate(secret: string): Promise<AuthenticatedKey | null> {
    const kind: ApiKeyKind | null = secret.startsWith(API_KEY_PREFIX) ? 'api_key' : secret.startsWith(OAUTH_ACCESS_PREFIX) ? 'oauth' : null;
    if (!kind || secret.length > 200) return null;
    const hash = hashApiKey(secret);
    const found = await this.group.submit({ hash, kind });
    if (!found || found.key.kind !== kind) return null;
    if (!timingSafeEqual(Buffer.from(found.presented, 'hex'), Buffer.from(hash, 'hex'))) return null;
    if (found.key.revoked_at) return null;
    const now = Date.now();
    if (found.key.expires_at && found.key.expires_at.getTime() <= now) return null;
    if (found.tokenExpiresAt && found.tokenExpiresAt.getTime() <= now) return null;
    return { key: found.key, workspace: found.workspace };
  }
}

/** A key found by a presented hash: its secret's, or an unretired OAuth access token's (which expires on its own). */
export type FoundKey = AuthenticatedKey & { presented: string; tokenExpiresAt: Date | null };

/** The hash of a presented secret, and what its prefix says it is: an API key or an OAuth access token. */
export interface PresentedSecret {
  hash: string;
  kind: ApiKeyKind;
}

/**
 * Keys (and their workspaces) by the hash of a presented secret, in the order asked; null where
 * none matches. API keys are found by their secret hash, OAuth access tokens in oauth_tokens,
 * both in one statement; a batch of API keys alone (the usual one) reads api_keys only.
 */
export async function lookupKeys(db: Db, presented: PresentedSecret[]): Promise<Array<FoundKey | null>> {
  const keyHashes = [...new Set(presented.filter((p) => p.kind === 'api_key').map((p) => p.hash))];
  const tokenHashes = [...new Set(presented.filter((p) => p.kind === 'oauth').map((p) => p.hash))];
  const byKeyHash = db
    .selectFrom('api_keys')
    .select(['id as matched_key_id', 'secret_hash as presented', sql<Date | null>`null::timestamptz`.as('token_expires_at')])
    .where('secret_hash', 'in', keyHashes.length > 0 ? keyHashes : ['']);
  const matches =
    tokenHashes.length === 0
      ? byKeyHash
      : keyHashes.length === 0
        ? activeAccessTokens(db, tokenHashes)
        : byKeyHash.unionAll(activeAccessTokens(db, tokenHashes));
  const query = db
    .selectFrom(matches.as('m'))
    .innerJoin('api_keys', 'api_keys.id', 'm.matched_key_id')
    .innerJoin('workspaces', 'workspaces.id', 'api_keys.workspace_id')
    .select([
      'm.presented',
      'm.token_expires_at',
      'api_keys.kind as key_kind',
      'api_keys.oauth_client_id',
      'api_keys.id as key_id',
      'api_keys.workspace_id',
      'api_keys.name as key_name',
      'api_keys.prefix',
      'api_keys.secret_hash',
      'api_keys.role',
      'api_keys.created_at as key_created_at',
      'api_keys.revoked_at',
      'api_keys.last_used_at',
      'api_keys.expires_at',
      'api_keys.created_by',
      'api_keys.monthly_credit_cap as key_monthly_credit_cap',
      'workspaces.name',
      'workspaces.kind',
      'workspaces.monthly_quota',
      'workspaces.rate_limit_per_minute',
      'workspaces.max_result_limit',
      'workspaces.max_active_jobs',
      'workspaces.created_at',
      'workspaces.personal_user_id',
      'workspaces.require_two_factor',
      'workspaces.created_by as workspace_created_by',
      'workspaces.monthly_credit_cap',
      'workspaces.low_credits_threshold',
      'workspaces.auto_recharge_enabled',
      'workspaces.auto_recharge_threshold',
      'workspaces.auto_recharge_pack_id',
    ]);
  const rows = await query.execute();
  const byHash = new Map<string, FoundKey>(
    rows.map((row) => [
      row.presented,
      {
        presented: row.presented,
        tokenExpiresAt: row.token_expires_at,
        key: {
          id: row.key_id,
          workspace_id: row.workspace_id,
          name: row.key_name,
          prefix: row.prefix,
          secret_hash: row.secret_hash,
          role: row.role,
          created_at: row.key_created_at,
          revoked_at: row.revoked_at,
          last_used_at: row.last_used_at,
          expires_at: row.expires_at,
          created_by: row.created_by,
          monthly_credit_cap: row.key_monthly_credit_cap,
          kind: row.key_kind,
          oauth_client_id: row.oauth_client_id,
        },
        workspace: {
          id: row.workspace_id,
          name: row.name,
          kind: row.kind,
          monthly_quota: row.monthly_quota,
          rate_limit_per_minute: row.rate_limit_per_minute,
          max_result_limit: row.max_result_limit,
          max_active_jobs: row.max_active_jobs,
          created_at: row.created_at,
          personal_user_id: row.personal_user_id,
          require_two_factor: row.require_two_factor,
          created_by: row.workspace_created_by,
          monthly_credit_cap: row.monthly_credit_cap,
          low_credits_threshold: row.low_credits_threshold,
          auto_recharge_enabled: row.auto_recharge_enabled,
          auto_recharge_threshold: row.auto_recharge_threshold,
          auto_recharge_pack_id: row.auto_recharge_pack_id,
        },
      },
    ]),
  );
  // Each request gets its own copy: routes may hold on to the tenant.
  return presented.map(({ hash }) => {
    const found = byHash.get(hash);
    return found ? { ...found, key: { ...found.key }, workspace: { ...found.workspace } } : null;
  });
}
