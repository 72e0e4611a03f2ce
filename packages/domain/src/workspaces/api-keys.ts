import { createHash, randomInt, timingSafeEqual } from 'node:crypto';
import { sql } from 'kysely';
import type { ApiKeyRow, Db, Executor, WorkspaceRow } from '@sdx/db';
import type { Batcher } from '../context';
import { newId } from '../ids';

/** API keys: `sdx_live_` + 40 random base62 characters. Only the SHA-256 hash is stored. */
export const API_KEY_PREFIX = 'sdx_live_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_LENGTH = 40;

export function generateApiKeySecret(): string {
  let out = API_KEY_PREFIX;
  for (let i = 0; i < SECRET_LENGTH; i++) out += BASE62[randomInt(62)];
  return out;
}

export function hashApiKey(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export interface CreatedApiKey {
  key_id: string;
  api_key: string;
}

export async function createApiKey(db: Executor, workspaceId: string, name: string | null = null): Promise<CreatedApiKey> {
  const secret = generateApiKeySecret();
  const id = newId('key');
  await db
    .insertInto('api_keys')
    .values({ id, workspace_id: workspaceId, name, prefix: secret.slice(0, API_KEY_PREFIX.length + 4), secret_hash: hashApiKey(secret) })
    .execute();
  return { key_id: id, api_key: secret };
}

export async function revokeApiKey(db: Executor, keyId: string): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: sql<Date>`now()` })
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) > 0) return true;
  const exists = await db.selectFrom('api_keys').select('id').where('id', '=', keyId).executeTakeFirst();
  return Boolean(exists);
}

export interface AuthenticatedKey {
  key: ApiKeyRow;
  workspace: WorkspaceRow;
}

/**
 * Resolves a presented secret to its key and workspace. The lookup goes through the hash index
 * and the stored hash is compared in constant time. No cache: a revocation takes effect at once.
 * `lookups` is the process's key-lookup batcher (lookupKeys behind it): lookups that arrive
 * together share one query; each still reads the key as it is after the request arrived.
 */
export async function authenticateApiKey(lookups: Batcher<string, AuthenticatedKey | null>, secret: string): Promise<AuthenticatedKey | null> {
  if (!secret.startsWith(API_KEY_PREFIX) || secret.length > 200) return null;
  const hash = hashApiKey(secret);
  const found = await lookups.submit(hash);
  if (!found) return null;
  if (!timingSafeEqual(Buffer.from(found.key.secret_hash, 'hex'), Buffer.from(hash, 'hex'))) return null;
  if (found.key.revoked_at) return null;
  return found;
}

/** Keys (and their workspaces) by secret hash, in the order asked; null where none matches. */
export async function lookupKeys(db: Db, hashes: string[]): Promise<Array<AuthenticatedKey | null>> {
  const unique = [...new Set(hashes)];
  const query = db
    .selectFrom('api_keys')
    .innerJoin('workspaces', 'workspaces.id', 'api_keys.workspace_id')
    .select([
      'api_keys.id as key_id',
      'api_keys.workspace_id',
      'api_keys.name as key_name',
      'api_keys.prefix',
      'api_keys.secret_hash',
      'api_keys.role',
      'api_keys.created_at as key_created_at',
      'api_keys.revoked_at',
      'api_keys.last_used_at',
      'workspaces.name',
      'workspaces.kind',
      'workspaces.monthly_quota',
      'workspaces.rate_limit_per_minute',
      'workspaces.max_result_limit',
      'workspaces.max_active_jobs',
      'workspaces.created_at',
    ])
  const rows = await query.where('api_keys.secret_hash', 'in', unique).execute();
  const byHash = new Map<string, AuthenticatedKey>(
    rows.map((row) => [
      row.secret_hash,
      {
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
        },
      },
    ]),
  );
  // Each request gets its own copy: routes may hold on to the tenant.
  return hashes.map((hash) => {
    const found = byHash.get(hash);
    return found ? { key: { ...found.key }, workspace: { ...found.workspace } } : null;
  });
}

/** Records use at most once a minute per key, off the request's critical path. */
export async function touchApiKey(db: Db, keyId: string): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ last_used_at: sql<Date>`now()` })
    .where('id', '=', keyId)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', sql<Date>`now() - interval '1 minute'`)]))
    .execute();
}
