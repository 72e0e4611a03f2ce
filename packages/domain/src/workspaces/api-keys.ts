import { createHash, randomInt } from 'node:crypto';
import { sql } from 'kysely';
import type { ApiKeyKind, ApiKeyRow, Executor, Tx } from '@sdx/db';
import { type Role, ROLES, roleAtLeast } from '../identity/roles';
import { type Actor, recordAudit, systemActor } from '../audit/audit';
import { ApiError } from '../errors';
import { newId } from '../ids';
import { inTransaction } from '../tx';
import { OAUTH_ACCESS_PREFIX } from './token-lookup';
import { CREATOR_REVOKED_ACTOR, type Creator, pauseRunsOfCreator, revokeInvitationsOf } from './creator-revoked';

/** API keys: `sdx_live_` + 40 random base62 characters. Only the SHA-256 hash is stored. */
export const API_KEY_PREFIX = 'sdx_live_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_LENGTH = 40;

export function generateApiKeySecret(prefix = API_KEY_PREFIX): string {
  let out = prefix;
  for (let i = 0; i < SECRET_LENGTH; i++) out += BASE62[randomInt(62)];
  return out;
}

export function hashApiKey(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** The part of the secret shown in listings: its first 12 characters (extensions.md 3). */
export const KEY_PREFIX_LENGTH = 12;

export interface CreatedApiKey {
  key_id: string;
  /** The secret, shown once: it is not stored. */
  api_key: string;
  key: ApiKeyRow;
}

export interface CreateApiKeyOptions {
  /** Default `owner`: keys of the admin CLI and of first start are owner keys. */
  role?: Role;
  expiresAt?: Date | null;
  /** The user or key that asks for it; null for the admin CLI. */
  createdBy?: string | null;
  /** The role of whoever asks: the new key's role may not exceed it (absent: the system, no limit). */
  grantorRole?: string | null;
  /** Credits submissions with the key may reserve in a UTC calendar month; null or absent: no cap. */
  monthlyCreditCap?: number | null;
  actor?: Actor;
  /** An OAuth grant: a key no secret opens (its tokens do, oauth/tokens.ts), made for this client. */
  oauth?: { clientId: string; clientName: string | null; expiresAt: Date };
}

/**
 * Makes a key: the one function behind POST /v1/keys, the admin CLI and first start. The key
 * and its audit event are written in one transaction (the caller's, when it passes one).
 */
export async function createApiKey(
  db: Executor,
  workspaceId: string,
  name: string | null = null,
  options: CreateApiKeyOptions = {},
): Promise<CreatedApiKey> {
  const role = options.role ?? 'owner';
  if (options.grantorRole !== undefined && !roleAtLeast(options.grantorRole, role)) {
    throw new ApiError('forbidden', `A key's role may not exceed your own role (${options.grantorRole ?? 'none'}).`, {
      required_role: role,
    });
  }
  const kind: ApiKeyKind = options.oauth ? 'oauth' : 'api_key';
  const secret = generateApiKeySecret(options.oauth ? OAUTH_ACCESS_PREFIX : API_KEY_PREFIX);
  const id = newId('key');
  const oauthData = options.oauth ? { kind, client_id: options.oauth.clientId, client_name: options.oauth.clientName } : {};
  return inTransaction(db, async (tx) => {
    const key = await tx
      .insertInto('api_keys')
      .values({
        id,
        workspace_id: workspaceId,
        name,
        prefix: secret.slice(0, KEY_PREFIX_LENGTH),
        secret_hash: hashApiKey(secret),
        role,
        expires_at: options.oauth?.expiresAt ?? options.expiresAt ?? null,
        created_by: options.createdBy ?? null,
        monthly_credit_cap: options.monthlyCreditCap ?? null,
        kind,
        oauth_client_id: options.oauth?.clientId ?? null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordAudit(tx, {
      workspaceId,
      action: 'api_key.created',
      actor: options.actor ?? systemActor('admin-cli'),
      targetType: 'api_key',
      targetId: id,
      data: {
        name,
        role,
        prefix: key.prefix,
        expires_at: key.expires_at?.toISOString() ?? null,
        monthly_credit_cap: key.monthly_credit_cap,
        ...oauthData,
      },
    });
    return { key_id: id, api_key: secret, key };
  });
}

export interface RevokeApiKeyOptions {
  /** Only a key of this workspace (an API caller's); absent for the admin CLI. */
  workspaceId?: string;
  actor?: Actor;
  /** Why, when not a person's choice (an OAuth grant whose code or refresh token was presented twice). */
  reason?: string;
  /**
   * The key that asks (DELETE /v1/keys/{key_id} with a key). When it was made with the key it
   * revokes, down the chain (a rotation, api-v1.md 5: the replacement revokes the key that
   * made it), it and what it made are spared. Not for an OAuth grant, whose chain always goes.
   */
  sparing?: string | null;
}

/**
 * Revokes a key or an OAuth grant at once (every process looks keys up on each request,
 * without a cache), and with it everything created with it (revokeChainBelow): the keys and
 * grants it made, down the chain, the schedules they made paused, the invitations they sent
 * revoked. The one entry point of every path that revokes one key: DELETE /v1/keys/{key_id}
 * (the console's Keys page), the admin CLI, the OAuth client's revocation, a code or refresh
 * token presented twice. True when the key exists (in the workspace, when given), revoked now
 * or before; its audit event is written only by the revocation that happens. An OAuth grant
 * revoked before (by a release that did not follow the chain) has what still lives of its
 * chain revoked again.
 */
export async function revokeApiKey(db: Executor, keyId: string, options: RevokeApiKeyOptions = {}): Promise<boolean> {
  return inTransaction(db, async (tx) => {
    let update = tx
      .updateTable('api_keys')
      .set({ revoked_at: sql<Date>`now()` })
      .where('id', '=', keyId)
      .where('revoked_at', 'is', null);
    if (options.workspaceId) update = update.where('workspace_id', '=', options.workspaceId);
    const revoked = await update.returning(['id', 'workspace_id', 'name', 'prefix', 'kind']).executeTakeFirst();
    if (revoked) {
      await recordAudit(tx, {
        workspaceId: revoked.workspace_id,
        action: 'api_key.revoked',
        actor: options.actor ?? systemActor('admin-cli'),
        targetType: 'api_key',
        targetId: revoked.id,
        data: { name: revoked.name, prefix: revoked.prefix, kind: revoked.kind, ...(options.reason ? { reason: options.reason } : {}) },
      });
      await afterKeysRevoked(tx, [revoked]);
      await revokeChainBelow(tx, [revoked.id], revoked.kind === 'oauth' ? null : (options.sparing ?? null));
      return true;
    }
    let exists = tx.selectFrom('api_keys').select(['id', 'kind']).where('id', '=', keyId);
    if (options.workspaceId) exists = exists.where('workspace_id', '=', options.workspaceId);
    const found = await exists.executeTakeFirst();
    if (!found) return false;
    if (found.kind === 'oauth') await revokeChainBelow(tx, [keyId]);
    return true;
  });
}

/** A key revoked by a chain, as its audit event names it. */
interface RevokedKey {
  id: string;
  workspace_id: string;
  name: string | null;
  prefix: string;
  role: string;
  kind: ApiKeyKind;
  created_by: string | null;
}

/**
 * Revocation follows creation (extensions-3.md 1): revokes, in the caller's transaction, every
 * live key and OAuth grant created with one of `rootIds` (whether those are revoked now or
 * were before), down the chain of `created_by`, each with its own `api_key.revoked` event
 * (actor `system`, `reason: creator_revoked`, naming the key that made it), then what those
 * keys made or sent (afterKeysRevoked). A key made by an OAuth access token records its grant
 * as creator; a grant, the user who consented. `sparing` (a rotation's replacement) and what it
 * made are left out; they stay below the revoked key, so whatever later revokes a key above it
 * still reaches them. Returns the keys revoked.
 */
export async function revokeChainBelow(tx: Tx, rootIds: readonly string[], sparing: string | null = null): Promise<string[]> {
  if (rootIds.length === 0) return [];
  const { rows } = await sql<RevokedKey>`
    with recursive below (id) as (
      select k.id from api_keys k where k.created_by = any(${[...rootIds]}::text[]) and k.id is distinct from ${sparing}::text
      union
      select k.id from api_keys k join below on k.created_by = below.id where k.id is distinct from ${sparing}::text
    )
    update api_keys set revoked_at = now()
     where id in (select id from below) and revoked_at is null
    returning id, workspace_id, name, prefix, role, kind, created_by
  `.execute(tx);
  const sorted = rows.sort((a, b) => a.id.localeCompare(b.id));
  for (const key of sorted) {
    await recordAudit(tx, {
      workspaceId: key.workspace_id,
      action: 'api_key.revoked',
      actor: CREATOR_REVOKED_ACTOR,
      targetType: 'api_key',
      targetId: key.id,
      data: { name: key.name, prefix: key.prefix, role: key.role, kind: key.kind, reason: 'creator_revoked', created_by: key.created_by },
    });
  }
  await afterKeysRevoked(tx, sorted);
  return sorted.map((key) => key.id);
}

/** What stops with a revoked key: the schedules it made (paused) and the invitations it sent (revoked). */
async function afterKeysRevoked(tx: Tx, keys: ReadonlyArray<{ id: string; workspace_id: string }>): Promise<void> {
  for (const key of keys) {
    const creator: Creator = { kind: 'key', id: key.id };
    await pauseRunsOfCreator(tx, key.workspace_id, creator);
    await revokeInvitationsOf(tx, { workspaceId: key.workspace_id, sender: creator, reason: 'sender_revoked' });
  }
}

/** Why keys followed their creator out: a removal, a demotion, or the creator's password change. */
export type KeyRevocationReason = 'creator_removed' | 'creator_demoted' | 'password_changed' | 'password_reset';

export interface RevokeKeysOfOptions {
  /** The creator whose keys go. */
  userId: string;
  /** Only keys of this workspace; absent, every workspace (a password change). */
  workspaceId?: string;
  /** Only keys whose role is above this one (a demotion to it). */
  above?: Role;
  /** Only these kinds among the keys the user made themselves (a reset: `oauth`, the grants they gave); what those made goes whatever its kind. Absent: every kind. */
  kinds?: ApiKeyKind[];
  reason: KeyRevocationReason;
  actor: Actor;
}

/**
 * Keys follow their creator (extensions-2.md 2): revokes, in the caller's transaction, every
 * live key and OAuth grant the user made and every key made by one of those, down the chain (a
 * key a member's key minted is the member's too, so a member cannot outlive a removal through
 * a key of a key), of a role above `above` when given; each with its own api_key.revoked event
 * naming the reason. Then revocation follows creation (revokeChainBelow): whatever those keys
 * made goes too, whatever its role, and their schedules pause. Returns the revoked IDs.
 * No cache stands between a key and its lookup, so the next request with it fails on every
 * process; an open event stream ends at its next credential check.
 */
export async function revokeKeysOf(tx: Tx, options: RevokeKeysOfOptions): Promise<string[]> {
  const workspace = options.workspaceId ?? null;
  const above = options.above ? ROLES.slice(ROLES.indexOf(options.above) + 1) : [...ROLES];
  if (above.length === 0) return [];
  const kinds = options.kinds ?? null;
  if (kinds && kinds.length === 0) return [];
  const { rows } = await sql<RevokedKey>`
    with recursive made (id) as (
      select k.id from api_keys k
       where k.created_by = ${options.userId} and (${workspace}::text is null or k.workspace_id = ${workspace}::text)
         and (${kinds === null} or k.kind = any(${kinds ?? []}::text[]))
      union
      select k.id from api_keys k join made on k.created_by = made.id
    )
    update api_keys set revoked_at = now()
     where id in (select id from made)
       and revoked_at is null
       and (expires_at is null or expires_at > now())
       and role in (${sql.join(above)})
    returning id, workspace_id, name, prefix, role, kind, created_by
  `.execute(tx);
  const sorted = rows.sort((a, b) => a.id.localeCompare(b.id));
  for (const key of sorted) {
    await recordAudit(tx, {
      workspaceId: key.workspace_id,
      action: 'api_key.revoked',
      actor: options.actor,
      targetType: 'api_key',
      targetId: key.id,
      data: {
        name: key.name,
        prefix: key.prefix,
        role: key.role,
        kind: key.kind,
        reason: options.reason,
        creator: options.userId,
        created_by: key.created_by,
      },
    });
  }
  await afterKeysRevoked(tx, sorted);
  const below = await revokeChainBelow(
    tx,
    sorted.map((key) => key.id),
  );
  return [...sorted.map((key) => key.id), ...below];
}

/** A key as the API shows it: never its secret or hash. */
export function renderApiKey(key: ApiKeyRow & { month_spent?: number }) {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix.slice(0, KEY_PREFIX_LENGTH),
    role: key.role,
    kind: key.kind,
    created_at: key.created_at.toISOString(),
    expires_at: key.expires_at?.toISOString() ?? null,
    last_used_at: key.last_used_at?.toISOString() ?? null,
    revoked_at: key.revoked_at?.toISOString() ?? null,
    created_by: key.created_by,
    monthly_credit_cap: key.monthly_credit_cap,
    month_spent_credits: key.month_spent ?? 0,
  };
}
