import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Tx } from '@sdx/db';
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

/** What a key is scoped to: one workspace and one endpoint. */
export type KeyScope = Pick<IdempotencyClaim, 'workspaceId' | 'endpoint' | 'key'>;

/** One string per scoped key, for maps and sets. */
export function scopeId(scope: KeyScope): string {
  return `${scope.workspaceId}\u0000${scope.endpoint}\u0000${scope.key}`;
}

/**
 * Claims a key inside the transaction that creates the work. A concurrent request with the
 * same key waits on the primary key until the first transaction ends: it then sees the
 * committed record and replays it, or, if the first rolled back (validation, credits), takes
 * the key itself. So one key yields exactly one piece of work, and failures are not stored.
 */
export async function claimIdempotencyKey(tx: Tx, claim: IdempotencyClaim): Promise<ClaimOutcome> {
  if ((await insertClaims(tx, [claim])).size > 0) return { kind: 'new' };
  const existing = (await findClaimRecords(tx, [claim])).get(scopeId(claim));
  if (!existing) throw new Error(`idempotency record ${claim.key} vanished while it was claimed`);
  if (existing.request_hash !== claim.requestHash) {
    throw new ApiError('idempotency_key_conflict', 'This Idempotency-Key was already used with a different request body.', {
      idempotency_key: claim.key,
    });
  }
  return { kind: 'replay', resourceId: existing.resource_id };
}

/**
 * Inserts claims in one statement, in the order given (callers claiming several keys pass them
 * sorted, so two transactions cannot deadlock on them). An expired record is replaced as if it
 * did not exist. Returns the scopeIds of the claims won; the others are held by a live record.
 */
export async function insertClaims(tx: Tx, claims: IdempotencyClaim[]): Promise<Set<string>> {
  if (claims.length === 0) return new Set();
  const inserted = await tx
    .insertInto('idempotency_keys')
    .values(
      claims.map((c) => ({
        workspace_id: c.workspaceId,
        endpoint: c.endpoint,
        key: c.key,
        request_hash: c.requestHash,
        resource_type: c.resourceType,
        resource_id: c.resourceId,
        created_at: c.now,
        expires_at: new Date(c.now.getTime() + IDEMPOTENCY_TTL_MS),
      })),
    )
    .onConflict((oc) =>
      oc
        .columns(['workspace_id', 'endpoint', 'key'])
        .doUpdateSet((eb) => ({
          request_hash: eb.ref('excluded.request_hash'),
          resource_type: eb.ref('excluded.resource_type'),
          resource_id: eb.ref('excluded.resource_id'),
          created_at: eb.ref('excluded.created_at'),
          expires_at: eb.ref('excluded.expires_at'),
        }))
        .whereRef('idempotency_keys.expires_at', '<=', 'excluded.created_at'),
    )
    .returning(['workspace_id', 'endpoint', 'key'])
    .execute();
  return new Set(inserted.map((r) => scopeId({ workspaceId: r.workspace_id, endpoint: r.endpoint, key: r.key })));
}

function unnestScopes(scopes: KeyScope[]) {
  return sql`unnest(${scopes.map((s) => s.workspaceId)}::text[], ${scopes.map((s) => s.endpoint)}::text[], ${scopes.map((s) => s.key)}::text[])`;
}

/** The records of the given keys, by scopeId. */
export async function findClaimRecords(tx: Tx, scopes: KeyScope[]): Promise<Map<string, { request_hash: string; resource_id: string }>> {
  const { rows } = await sql<{ workspace_id: string; endpoint: string; key: string; request_hash: string; resource_id: string }>`
    select i.workspace_id, i.endpoint, i.key, i.request_hash, i.resource_id
    from idempotency_keys i
    join ${unnestScopes(scopes)} as k(workspace_id, endpoint, key)
      on i.workspace_id = k.workspace_id and i.endpoint = k.endpoint and i.key = k.key
  `.execute(tx);
  return new Map(rows.map((r) => [scopeId({ workspaceId: r.workspace_id, endpoint: r.endpoint, key: r.key }), r]));
}

/** Removes claims made in this transaction for work that was refused: the keys stay free. */
export async function dropClaims(tx: Tx, scopes: KeyScope[]): Promise<void> {
  if (scopes.length === 0) return;
  await sql`
    delete from idempotency_keys i
    using ${unnestScopes(scopes)} as k(workspace_id, endpoint, key)
    where i.workspace_id = k.workspace_id and i.endpoint = k.endpoint and i.key = k.key
  `.execute(tx);
}

/** Points claimed keys at the work that answered them (deduplication may answer with an existing job). */
export async function pointClaims(tx: Tx, entries: Array<{ scope: KeyScope; resourceId: string }>): Promise<void> {
  if (entries.length === 0) return;
  const scopes = entries.map((e) => e.scope);
  await sql`
    update idempotency_keys i set resource_id = k.resource_id
    from unnest(${scopes.map((s) => s.workspaceId)}::text[], ${scopes.map((s) => s.endpoint)}::text[], ${scopes.map((s) => s.key)}::text[],
                ${entries.map((e) => e.resourceId)}::text[]) as k(workspace_id, endpoint, key, resource_id)
    where i.workspace_id = k.workspace_id and i.endpoint = k.endpoint and i.key = k.key
  `.execute(tx);
}
