import type { Executor, Role, Tx } from '@sdx/db';
import { roleAtLeast } from '../identity/roles';
import { type Actor, recordAudit, systemActor } from '../audit/audit';
import type { Services } from '../context';
import { ApiError } from '../errors';
import { revokeKeysOf } from './api-keys';
import { pauseRunsOfCreator, revokeInvitationsOf } from './creator-revoked';
import { lockWorkspace } from './teams';

export interface MemberView {
  user_id: string;
  email: string;
  display_name: string | null;
  role: Role;
  joined_at: string;
}

async function membersQuery(db: Executor, workspaceId: string) {
  return db
    .selectFrom('memberships')
    .innerJoin('users', 'users.id', 'memberships.user_id')
    .select(['memberships.user_id', 'users.email', 'users.display_name', 'memberships.role', 'memberships.created_at'])
    .where('memberships.workspace_id', '=', workspaceId)
    .orderBy('memberships.created_at')
    .orderBy('memberships.user_id')
    .execute();
}

/** The workspace's members, oldest first. */
export async function listMembers(db: Executor, workspaceId: string): Promise<MemberView[]> {
  return (await membersQuery(db, workspaceId)).map((m) => ({
    user_id: m.user_id,
    email: m.email,
    display_name: m.display_name,
    role: m.role,
    joined_at: m.created_at.toISOString(),
  }));
}

/** Who is changing a membership: their role in the workspace and, for a signed-in user, who they are. */
export interface Caller {
  role: Role;
  userId: string | null;
  actor: Actor;
}

async function lockedMember(tx: Tx, workspaceId: string, userId: string) {
  await lockWorkspace(tx, workspaceId);
  const member = await tx
    .selectFrom('memberships')
    .innerJoin('users', 'users.id', 'memberships.user_id')
    .select(['memberships.user_id', 'users.email', 'users.display_name', 'memberships.role', 'memberships.created_at'])
    .where('memberships.workspace_id', '=', workspaceId)
    .where('memberships.user_id', '=', userId)
    .executeTakeFirst();
  if (!member) throw new ApiError('member_not_found', 'No such member in this workspace.', { user_id: userId });
  return member;
}

async function ownerCount(tx: Tx, workspaceId: string): Promise<number> {
  const row = await tx
    .selectFrom('memberships')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('role', '=', 'owner')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The actor of the revocations that follow a membership change: the rule, not the caller. */
const KEYS_FOLLOW_CREATOR = systemActor('keys-follow-creator');

function requireRole(caller: Caller, required: Role, why: string): void {
  if (!roleAtLeast(caller.role, required)) throw new ApiError('forbidden', why, { required_role: required });
}

/**
 * Changes a member's role. Admins manage the roles below owner; making or unmaking an owner
 * needs an owner; the last owner cannot be demoted (409 last_owner). The workspace row is locked
 * first, so two owners demoting each other at once leave one owner. A demotion revokes, in the
 * same transaction, the member's keys whose role is above the new one (revokeKeysOf, and with
 * them what they made) and the pending invitations the member sent whose role is above the new
 * one (revokeInvitationsOf).
 */
export async function changeMemberRole(
  services: Services,
  workspaceId: string,
  userId: string,
  role: Role,
  caller: Caller,
): Promise<MemberView> {
  return services.db.transaction().execute(async (tx) => {
    const member = await lockedMember(tx, workspaceId, userId);
    if (member.role === 'owner' || role === 'owner') requireRole(caller, 'owner', 'Only an owner can make or unmake owners.');
    else requireRole(caller, 'admin', 'Changing roles needs the admin role.');
    if (member.role === 'owner' && role !== 'owner' && (await ownerCount(tx, workspaceId)) <= 1) {
      throw new ApiError('last_owner', 'A workspace keeps at least one owner; make another owner first.');
    }
    if (member.role !== role) {
      await tx.updateTable('memberships').set({ role }).where('workspace_id', '=', workspaceId).where('user_id', '=', userId).execute();
      await recordAudit(tx, {
        workspaceId,
        action: 'member.role_changed',
        actor: caller.actor,
        targetType: 'user',
        targetId: userId,
        data: { from: member.role, to: role },
      });
      if (!roleAtLeast(role, member.role)) {
        await revokeKeysOf(tx, { workspaceId, userId, above: role, reason: 'creator_demoted', actor: KEYS_FOLLOW_CREATOR });
        await revokeInvitationsOf(tx, { workspaceId, sender: { kind: 'user', id: userId }, above: role, reason: 'sender_demoted' });
      }
    }
    return {
      user_id: member.user_id,
      email: member.email,
      display_name: member.display_name,
      role,
      joined_at: member.created_at.toISOString(),
    };
  });
}

/**
 * Removes a member: anyone may leave; removing another needs admin, removing an owner needs an
 * owner; never the last owner. Every key the member made in the workspace goes with them, in the
 * same transaction (revokeKeysOf), with the pending invitations they sent (revokeInvitationsOf);
 * the schedules they made pause (pauseRunsOfCreator).
 */
export async function removeMember(services: Services, workspaceId: string, userId: string, caller: Caller): Promise<void> {
  await services.db.transaction().execute(async (tx) => {
    const member = await lockedMember(tx, workspaceId, userId);
    if (caller.userId !== userId) {
      if (member.role === 'owner') requireRole(caller, 'owner', 'Only an owner can remove an owner.');
      else requireRole(caller, 'admin', 'Removing a member needs the admin role.');
    }
    if (member.role === 'owner' && (await ownerCount(tx, workspaceId)) <= 1) {
      throw new ApiError('last_owner', 'A workspace keeps at least one owner; make another owner first.');
    }
    await tx.deleteFrom('memberships').where('workspace_id', '=', workspaceId).where('user_id', '=', userId).execute();
    await recordAudit(tx, {
      workspaceId,
      action: 'member.removed',
      actor: caller.actor,
      targetType: 'user',
      targetId: userId,
      data: { email: member.email, role: member.role, self: caller.userId === userId },
    });
    await revokeKeysOf(tx, { workspaceId, userId, reason: 'creator_removed', actor: KEYS_FOLLOW_CREATOR });
    await revokeInvitationsOf(tx, { workspaceId, sender: { kind: 'user', id: userId }, reason: 'sender_removed' });
    await pauseRunsOfCreator(tx, workspaceId, { kind: 'user', id: userId });
  });
}

/** Adds a user to a workspace with a role, and the member.joined event, in the caller's transaction. */
export async function addMember(
  tx: Tx,
  workspaceId: string,
  userId: string,
  role: Role,
  actor: Actor,
  data: Record<string, unknown> = {},
): Promise<void> {
  await tx.insertInto('memberships').values({ workspace_id: workspaceId, user_id: userId, role }).execute();
  await recordAudit(tx, { workspaceId, action: 'member.joined', actor, targetType: 'user', targetId: userId, data: { ...data, role } });
}
