import { sql } from 'kysely';
import type { CreatorKind, Role, Tx } from '@sdx/db';
import { ROLES } from '../identity/roles';
import { type Actor, recordAudit, systemActor } from '../audit/audit';

/** Who made a schedule (or a monitor), as `created_by` shows it: a signed-in user or an API key (an OAuth grant is a key). */
export interface Creator {
  kind: CreatorKind;
  id: string;
}

/** The actor of what the service does when a creator's access ends: the rule, not a person. */
export const CREATOR_REVOKED_ACTOR = systemActor('revocation-chain');

/**
 * Everything that runs on its own in a creator's name stops when the creator's access ends
 * (extensions-3.md 1): the key was revoked (by any path, down the chain) or the user left the
 * workspace. Pauses, in the caller's transaction, the creator's active schedules of the
 * workspace and its active monitors (status `paused`, `paused_reason: creator_revoked`), each
 * with a `schedule.paused` or `monitor.paused` audit event (actor `system`). Rows with no recorded creator (made before it was recorded)
 * are never touched. The one place every revocation and removal path calls: what else runs in
 * a creator's name (monitors) is paused here too. Returns the IDs paused.
 */
export async function pauseRunsOfCreator(tx: Tx, workspaceId: string, creator: Creator): Promise<string[]> {
  const paused = await tx
    .updateTable('schedules')
    .set({ status: 'paused', paused_reason: 'creator_revoked', updated_at: sql<Date>`now()` })
    .where('workspace_id', '=', workspaceId)
    .where('created_by_kind', '=', creator.kind)
    .where('created_by_id', '=', creator.id)
    .where('status', '=', 'active')
    .where('deleted_at', 'is', null)
    .returning(['id', 'name'])
    .execute();
  for (const schedule of paused.sort((a, b) => a.id.localeCompare(b.id))) {
    await recordAudit(tx, {
      workspaceId,
      action: 'schedule.paused',
      actor: CREATOR_REVOKED_ACTOR,
      targetType: 'schedule',
      targetId: schedule.id,
      data: { name: schedule.name, reason: 'creator_revoked', created_by: creator },
    });
  }
  const monitors = await pauseMonitorsOfCreator(tx, workspaceId, creator);
  return [...paused.map((s) => s.id), ...monitors];
}

/**
 * The monitors a creator made, paused because that creator can no longer act for the workspace
 * (its key revoked, or the user left it; extensions-3.md section 1): status paused,
 * paused_reason creator_revoked, and one audit event `monitor.paused` per monitor, in the
 * caller's transaction (the revocation's or the removal's). Monitors made before created_by was
 * recorded (null) are never paused here. Returns the IDs paused.
 */
export async function pauseMonitorsOfCreator(
  tx: Tx,
  workspaceId: string,
  creator: Creator,
  actor: Actor = CREATOR_REVOKED_ACTOR,
): Promise<string[]> {
  const paused = await tx
    .updateTable('monitors')
    .set({ status: 'paused', paused_reason: 'creator_revoked', updated_at: new Date() })
    .where('workspace_id', '=', workspaceId)
    .where('created_by_kind', '=', creator.kind)
    .where('created_by_id', '=', creator.id)
    .where('status', '=', 'active')
    .where('deleted_at', 'is', null)
    .returning('id')
    .execute();
  for (const { id } of paused) {
    await recordAudit(tx, {
      workspaceId,
      action: 'monitor.paused',
      actor,
      targetType: 'monitor',
      targetId: id,
      data: { paused_reason: 'creator_revoked', created_by: creator },
    });
  }
  return paused.map((p) => p.id);
}

/** Which pending invitations a sender's lost access revokes: all of them, or those whose role is above a new role. */
export interface SenderInvitations {
  workspaceId: string;
  /** The signed-in user who sent them (invitations.invited_by), or the key (invited_by_key_id). */
  sender: Creator;
  /** Only invitations whose role is above this one (a demotion to it); absent: every pending one. */
  above?: Role;
  reason: 'sender_removed' | 'sender_demoted' | 'sender_revoked';
}

/**
 * Invitations follow their sender (extensions-3.md 1): revokes, in the caller's transaction,
 * the pending invitations the user or key sent in the workspace (on a demotion, those whose
 * role is above the new one), each audited `invitation.revoked` with actor `system` and the
 * reason. Revoked invitations leave the list of pending ones and their token answers 410.
 */
export async function revokeInvitationsOf(tx: Tx, options: SenderInvitations): Promise<string[]> {
  const roles = options.above ? ROLES.slice(ROLES.indexOf(options.above) + 1) : [...ROLES];
  if (roles.length === 0) return [];
  const revoked = await tx
    .updateTable('invitations')
    .set({ revoked_at: sql<Date>`now()` })
    .where('workspace_id', '=', options.workspaceId)
    .where(options.sender.kind === 'user' ? 'invited_by' : 'invited_by_key_id', '=', options.sender.id)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('role', 'in', roles)
    .returning(['id', 'email', 'role'])
    .execute();
  for (const invitation of revoked.sort((a, b) => a.id.localeCompare(b.id))) {
    await recordAudit(tx, {
      workspaceId: options.workspaceId,
      action: 'invitation.revoked',
      actor: CREATOR_REVOKED_ACTOR,
      targetType: 'invitation',
      targetId: invitation.id,
      data: { email: invitation.email, role: invitation.role, reason: options.reason, sender: options.sender },
    });
  }
  return revoked.map((i) => i.id);
}
