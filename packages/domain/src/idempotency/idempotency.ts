import { createHash } from 'node:crypto';
import type { Executor, Tx } from '@sdx/db';
import { ApiError } from '../errors';

/** Idempotency keys are scoped to workspace and endpoint and kept this long. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** JSON with keys sorted at every level: the canonical form two bodies are compared in. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export function requestHash(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

export interface IdempotencyClaim {
  workspaceId: string;
  endpoint: string;
  key: string;
  requestHash: string;
  resourceType: 'job' | 'batch';
  /** ID the new work will get if this request is the first with the key. */
  resourceId: string;
  now: Date;
}

export type ClaimOutcome = { kind: 'new' } | { kind: 'replay'; resourceId: string };

/**
 * Claims a key inside the transaction that creates the work. A concurrent request with the
 * same key waits on the primary key until the first transaction ends: it then sees the
 * committed record and replays it, or, if the first rolled back (validation, credits), takes
 * the key itself. So one key yields exactly one piece of work, and failures are not stored.
 */
export async function claimIdempotencyKey(tx: Tx, claim: IdempotencyClaim): Promise<ClaimOutcome> {
  const expiresAt = new Date(claim.now.getTime() + IDEMPOTENCY_TTL_MS);
  const inserted = await tx
    .insertInto('idempotency_keys')
    .values({
      workspace_id: claim.workspaceId,
      endpoint: claim.endpoint,
      key: claim.key,
      request_hash: claim.requestHash,
      resource_type: claim.resourceType,
      resource_id: claim.resourceId,
      expires_at: expiresAt,
    })
    .onConflict((oc) =>
      oc
        .columns(['workspace_id', 'endpoint', 'key'])
        // An expired record is replaced as if it did not exist.
        .doUpdateSet({
          request_hash: claim.requestHash,
          resource_type: claim.resourceType,
          resource_id: claim.resourceId,
          created_at: claim.now,
          expires_at: expiresAt,
        })
        .where('idempotency_keys.expires_at', '<=', claim.now),
    )
    .returning('resource_id')
    .executeTakeFirst();
  if (inserted) return { kind: 'new' };
  const existing = await tx
    .selectFrom('idempotency_keys')
    .select(['request_hash', 'resource_id'])
    .where('workspace_id', '=', claim.workspaceId)
    .where('endpoint', '=', claim.endpoint)
    .where('key', '=', claim.key)
    .executeTakeFirstOrThrow();
  if (existing.request_hash !== claim.requestHash) {
    throw new ApiError('idempotency_key_conflict', 'This Idempotency-Key was already used with a different request body.', {
      idempotency_key: claim.key,
    });
  }
  return { kind: 'replay', resourceId: existing.resource_id };
}

/** Points a claimed key at the work that answered it (deduplication may answer with an existing job). */
export async function pointIdempotencyKey(tx: Tx, claim: Pick<IdempotencyClaim, 'workspaceId' | 'endpoint' | 'key'>, resourceId: string): Promise<void> {
  await tx
    .updateTable('idempotency_keys')
    .set({ resource_id: resourceId })
    .where('workspace_id', '=', claim.workspaceId)
    .where('endpoint', '=', claim.endpoint)
    .where('key', '=', claim.key)
    .execute();
}

export async function purgeExpiredIdempotencyKeys(db: Executor, now: Date): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
