import { sql } from 'kysely';
import type { ApiKeyRow, Executor, Tx } from '@sdx/db';
import { isRole, roleAtLeast } from '../identity/roles';
import { type Actor, recordAudit } from '../audit/audit';
import { ApiError } from '../errors';
import { periodStartOf } from '../time';
import { inTransaction } from '../tx';

/**
 * A workspace's API keys as GET /v1/keys lists them, with this month's spend, and PATCH
 * /v1/keys/{key_id}: a key's name and monthly spend cap. Creating and revoking keys is in
 * api-keys.ts.
 */

/** A key with what it reserved or spent this month (released credits excluded). */
export type ApiKeyWithSpend = ApiKeyRow & { month_spent: number };

/** The keys' rows with their spend in the month of `now` (a spend row of an older month counts nothing). */
function keysWithSpend(db: Executor, now: Date) {
  const period = periodStartOf(now);
  return db
    .selectFrom('api_keys')
    .leftJoin('api_key_spend', 'api_key_spend.key_id', 'api_keys.id')
    .selectAll('api_keys')
    .select(
      sql<number>`coalesce(case when api_key_spend.period_start = ${period}::date then api_key_spend.spent end, 0)`.as('month_spent'),
    );
}

/** A workspace's keys, newest first, revoked ones included, with this month's spend. */
export async function listApiKeys(db: Executor, workspaceId: string, now: Date = new Date()): Promise<ApiKeyWithSpend[]> {
  return keysWithSpend(db, now).where('api_keys.workspace_id', '=', workspaceId).orderBy('api_keys.id', 'desc').execute();
}

export interface UpdateApiKeyChange {
  name?: string;
  /** A number caps the key's month; null removes the cap; absent leaves it. */
  monthlyCreditCap?: number | null;
}

/** Who changes a key: the calling key (null for a signed-in user) and its role. */
export interface KeyChanger {
  keyId: string | null;
  role: string | null;
}

/**
 * PATCH /v1/keys/{key_id}: renames a key or sets its monthly spend cap, audited (`api_key.updated`
 * with what changed). A revoked, unknown or other workspace's key is 404. Admission reads the
 * cap on each submission, so a change applies to the next one. A key may not change the cap of
 * itself, of a key up its own creation chain (the key that made it could otherwise be lifted
 * by a key it made), nor of a key whose role is above its own: 403 forbidden (extensions-3.md
 * 1). Sessions (of admins and owners: the route's access) may.
 */
export async function updateApiKey(
  db: Executor,
  workspaceId: string,
  keyId: string,
  change: UpdateApiKeyChange,
  actor: Actor,
  now: Date,
  changer?: KeyChanger,
): Promise<ApiKeyWithSpend> {
  return inTransaction(db, async (tx) => {
    const set = {
      ...(change.name !== undefined ? { name: change.name } : {}),
      ...(change.monthlyCreditCap !== undefined ? { monthly_credit_cap: change.monthlyCreditCap } : {}),
    };
    const before = await tx
      .selectFrom('api_keys')
      .select(['name', 'monthly_credit_cap', 'role'])
      .where('id', '=', keyId)
      .where('workspace_id', '=', workspaceId)
      .where('revoked_at', 'is', null)
      .forUpdate()
      .executeTakeFirst();
    if (!before) throw new ApiError('key_not_found', 'No such API key in this workspace.', { key_id: keyId });
    if (changer?.keyId && change.monthlyCreditCap !== undefined) await checkCapChanger(tx, keyId, before.role, changer.keyId, changer.role);
    if (Object.keys(set).length > 0) await tx.updateTable('api_keys').set(set).where('id', '=', keyId).execute();
    await recordAudit(tx, {
      workspaceId,
      action: 'api_key.updated',
      actor,
      targetType: 'api_key',
      targetId: keyId,
      data: {
        before: { name: before.name, monthly_credit_cap: before.monthly_credit_cap },
        after: {
          name: change.name ?? before.name,
          monthly_credit_cap: change.monthlyCreditCap !== undefined ? change.monthlyCreditCap : before.monthly_credit_cap,
        },
      },
    });
    return keysWithSpend(tx, now).where('api_keys.id', '=', keyId).executeTakeFirstOrThrow();
  });
}

/** 403 forbidden when the calling key may not change the cap of `keyId` (itself, a key that made it, or a key of a higher role). */
async function checkCapChanger(tx: Tx, keyId: string, role: string, callerKeyId: string, callerRole: string | null): Promise<void> {
  if (!isRole(role) || !roleAtLeast(callerRole, role)) {
    throw new ApiError('forbidden', `A key may not change a key whose role (${role}) is above its own (${callerRole ?? 'none'}).`, {
      required_role: role,
    });
  }
  const { rows } = await sql<{ id: string }>`
    with recursive up (id, created_by) as (
      select id, created_by from api_keys where id = ${callerKeyId}
      union
      select k.id, k.created_by from api_keys k join up on k.id = up.created_by
    )
    select id from up where id = ${keyId}
  `.execute(tx);
  if (rows.length > 0) {
    throw new ApiError(
      'forbidden',
      keyId === callerKeyId
        ? "A key may not change its own monthly_credit_cap; ask an admin's session."
        : 'A key may not change the monthly_credit_cap of the key that made it.',
    );
  }
}
