import { type Kysely, sql } from 'kysely';

/**
 * Revocation follows creation (extensions-3.md 1):
 * - schedules.created_by_kind / created_by_id: who made a schedule (`user` or `key`, and its
 *   ID); null for the schedules made before, which are never paused for a creator. Their
 *   automatic runs count against the creating key's monthly cap.
 * - schedules.paused_reason: why a schedule is paused when the service paused it
 *   (`creator_revoked`); null when a person paused it or it is not paused.
 * - invitations.invited_by_key_id: the API key that sent an invitation (invited_by stays the
 *   signed-in user that sent it), so acceptance can re-check its sender.
 * - api_keys_created_by_idx: the chain of keys and grants a key made, followed on every
 *   revocation.
 *
 * Additive: nullable columns without defaults (no table rewrite); the previous release reads
 * none of them. The index is built in the migration's transaction: api_keys is small (keys per
 * workspace), so its write lock lasts a moment, bounded by the migrations' lock timeout.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table schedules
      add column created_by_kind text check (created_by_kind in ('user', 'key')),
      add column created_by_id text,
      add column paused_reason text`.execute(db);
  await sql`alter table invitations add column invited_by_key_id text`.execute(db);
  await sql`create index api_keys_created_by_idx on api_keys (created_by) where created_by is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists api_keys_created_by_idx`.execute(db);
  await sql`alter table invitations drop column if exists invited_by_key_id`.execute(db);
  await sql`alter table schedules drop column if exists created_by_kind, drop column if exists created_by_id, drop column if exists paused_reason`.execute(
    db,
  );
}
