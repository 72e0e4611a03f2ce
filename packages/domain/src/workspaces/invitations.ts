import { sql } from 'kysely';
import type { Executor, InvitationRow, Role, Tx } from '@sdx/db';
import { invitationMail } from '@sdx/mail';
import { roleAtLeast } from '../identity/roles';
import { randomToken, tokenHash } from '../identity/secrets';
import { normalizeEmail } from '../identity/emails';
import { type Actor, recordAudit } from '../audit/audit';
import type { Services } from '../context';
import { ApiError } from '../errors';
import { newId } from '../ids';
import { queueMail } from '../mail/outbox';
import { addMember, type Caller } from './members';
import { lockWorkspace, renderWorkspace, type WorkspaceView } from './teams';

/** An invitation is valid 7 days. */
export const INVITATION_TTL_MS = 7 * 24 * 3600_000;
/** Invitations a workspace may send per UTC day (extensions-2.md 2), counted from the invitations table. */
export const INVITATIONS_PER_DAY = 50;

export interface CreatedInvitation {
  invitation: InvitationRow;
  /** Shown once (and mailed when SMTP_URL is set): only its hash is stored. */
  token: string;
  /** `{APP_URL}/console/invitations/accept?token=…` */
  acceptUrl: string;
  workspaceName: string;
  /** Whether the invitation mail was queued (SMTP_URL set): the caller may kick the mail sender after commit. */
  mailed: boolean;
}

/** The start of the next UTC day after `at`. */
function nextUtcMidnight(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1));
}

/**
 * 429 rate_limit_exceeded once the workspace sent INVITATIONS_PER_DAY invitations this UTC day
 * (revoked and accepted ones count), with Retry-After up to the next UTC midnight. The caller
 * holds the workspace's lock, so two invitations at once cannot both take the last place.
 */
async function checkDailyInvitations(tx: Tx, workspaceId: string, now: Date): Promise<void> {
  const midnight = nextUtcMidnight(now);
  const dayStart = new Date(midnight.getTime() - 24 * 3600_000);
  const row = await tx
    .selectFrom('invitations')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('created_at', '>=', dayStart)
    .executeTakeFirstOrThrow();
  if (Number(row.n) < INVITATIONS_PER_DAY) return;
  const seconds = Math.max(1, Math.ceil((midnight.getTime() - now.getTime()) / 1000));
  throw new ApiError(
    'rate_limit_exceeded',
    `A workspace sends at most ${INVITATIONS_PER_DAY} invitations a day (UTC); retry in ${seconds} s.`,
    { retry_after: seconds },
    { 'Retry-After': String(seconds) },
  );
}

/** Who the invitation mail names as its sender: the signed-in user, or the user who made the calling key. */
async function inviterOf(tx: Tx, caller: Caller): Promise<{ email: string; display_name: string | null } | undefined> {
  let userId = caller.userId;
  if (!userId && caller.actor.type === 'api_key' && caller.actor.id) {
    const key = await tx.selectFrom('api_keys').select('created_by').where('id', '=', caller.actor.id).executeTakeFirst();
    if (key?.created_by?.startsWith('usr_')) userId = key.created_by;
  }
  if (!userId) return undefined;
  return tx.selectFrom('users').select(['email', 'display_name']).where('id', '=', userId).executeTakeFirst();
}

/**
 * Invites an email into a team workspace. Admins invite with the roles below owner, owners
 * with any role. A new invitation to the same email replaces a pending one. At most
 * INVITATIONS_PER_DAY a UTC day per workspace. With SMTP_URL set, the invitation mail is queued
 * in the same transaction (mail/outbox.ts): it goes out exactly when the invitation exists.
 */
export async function createInvitation(
  services: Services,
  workspaceId: string,
  email: string,
  role: Role,
  caller: Caller,
): Promise<CreatedInvitation> {
  if (role === 'owner' && !roleAtLeast(caller.role, 'owner')) {
    throw new ApiError('forbidden', 'Only an owner can invite an owner.', { required_role: 'owner' });
  }
  const address = normalizeEmail(email);
  return services.db.transaction().execute(async (tx) => {
    const workspace = await lockWorkspace(tx, workspaceId);
    if (workspace.kind === 'personal')
      throw new ApiError('personal_workspace', 'A personal workspace takes no members; create a team workspace.');
    await checkDailyInvitations(tx, workspaceId, services.clock.now());
    const member = await tx
      .selectFrom('memberships')
      .innerJoin('users', 'users.id', 'memberships.user_id')
      .select('users.id')
      .where('memberships.workspace_id', '=', workspaceId)
      .where('users.email', '=', address)
      .executeTakeFirst();
    if (member) throw new ApiError('already_member', 'This email is a member of the workspace already.', { user_id: member.id });
    await tx
      .updateTable('invitations')
      .set({ revoked_at: sql<Date>`now()` })
      .where('workspace_id', '=', workspaceId)
      .where('email', '=', address)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .execute();
    const token = randomToken();
    const invitation = await tx
      .insertInto('invitations')
      .values({
        id: newId('inv'),
        workspace_id: workspaceId,
        email: address,
        role,
        token_hash: tokenHash(token),
        invited_by: caller.userId,
        invited_by_key_id: caller.userId === null && caller.actor.type === 'api_key' ? caller.actor.id : null,
        expires_at: sql<Date>`now() + ${`${INVITATION_TTL_MS / 1000} seconds`}::interval`,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordAudit(tx, {
      workspaceId,
      action: 'member.invited',
      actor: caller.actor,
      targetType: 'invitation',
      targetId: invitation.id,
      data: { email: address, role },
    });
    const acceptUrl = `${services.config.appUrl}/console/invitations/accept?token=${encodeURIComponent(token)}`;
    const inviter = await inviterOf(tx, caller);
    const mail = invitationMail({
      appUrl: services.config.appUrl,
      workspaceName: workspace.name,
      inviterEmail: inviter?.email ?? null,
      inviterName: inviter?.display_name ?? null,
      role,
      acceptUrl,
      expiresAt: invitation.expires_at,
    });
    const mailed = await queueMail(tx, services.config, { to: address, template: 'invitation', ...mail });
    return { invitation, token, acceptUrl, workspaceName: workspace.name, mailed };
  });
}

/** Pending invitations (neither accepted, revoked nor expired), newest first. */
export async function listInvitations(db: Executor, workspaceId: string): Promise<InvitationRow[]> {
  return db
    .selectFrom('invitations')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .orderBy('id', 'desc')
    .execute();
}

export function renderInvitation(invitation: InvitationRow) {
  return {
    id: invitation.id,
    email: invitation.email,
    role: invitation.role,
    created_at: invitation.created_at.toISOString(),
    expires_at: invitation.expires_at.toISOString(),
  };
}

/** What the holder of an invitation's token may know before accepting it (GET /v1/invitations/preview). */
export interface InvitationPreview {
  workspace: { id: string; name: string };
  role: Role;
  expires_at: string;
  invited_by: { display_name: string | null; email: string } | null;
}

/**
 * The workspace and the inviter of a pending invitation, read by its token; nothing changes. An
 * expired, revoked, used or unknown token, or one whose sender may no longer send it, is 410
 * invitation_invalid, as acceptInvitation answers.
 */
export async function previewInvitation(db: Executor, token: string): Promise<InvitationPreview> {
  const found = await db
    .selectFrom('invitations as i')
    .innerJoin('workspaces as w', 'w.id', 'i.workspace_id')
    .leftJoin('users as u', 'u.id', 'i.invited_by')
    .select([
      'i.role',
      'i.expires_at',
      'i.accepted_at',
      'i.revoked_at',
      'i.invited_by',
      'i.invited_by_key_id',
      'w.id as workspace_id',
      'w.name as workspace_name',
      'u.display_name',
      'u.email',
    ])
    .where('i.token_hash', '=', tokenHash(token))
    .executeTakeFirst();
  if (!found || found.accepted_at || found.revoked_at || found.expires_at.getTime() <= Date.now() || !(await senderStillMay(db, found))) {
    throw new ApiError('invitation_invalid', 'This invitation has expired, was revoked or was used already.');
  }
  return {
    workspace: { id: found.workspace_id, name: found.workspace_name },
    role: found.role,
    expires_at: found.expires_at.toISOString(),
    invited_by: found.email ? { display_name: found.display_name ?? null, email: found.email } : null,
  };
}

/** Revokes a pending invitation; one already used, revoked or expired is left as it is. 404 when unknown. */
export async function revokeInvitation(services: Services, workspaceId: string, invitationId: string, actor: Actor): Promise<void> {
  await services.db.transaction().execute(async (tx) => {
    const revoked = await tx
      .updateTable('invitations')
      .set({ revoked_at: sql<Date>`now()` })
      .where('id', '=', invitationId)
      .where('workspace_id', '=', workspaceId)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .returning(['id', 'email', 'role'])
      .executeTakeFirst();
    if (revoked) {
      await recordAudit(tx, {
        workspaceId,
        action: 'invitation.revoked',
        actor,
        targetType: 'invitation',
        targetId: revoked.id,
        data: { email: revoked.email, role: revoked.role },
      });
      return;
    }
    const exists = await tx
      .selectFrom('invitations')
      .select('id')
      .where('id', '=', invitationId)
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst();
    if (!exists) throw new ApiError('invitation_not_found', 'No such invitation in this workspace.', { invitation_id: invitationId });
  });
}

/**
 * Whether the sender of an invitation may still send it (extensions-3.md 1): a user still a
 * member of the workspace with a role at least the invited one, or a key still live with such a
 * role. An invitation older than the record of its sending key (neither recorded) is judged as
 * it was sent.
 */
async function senderStillMay(
  tx: Executor,
  invitation: Pick<InvitationRow, 'workspace_id' | 'role' | 'invited_by' | 'invited_by_key_id'>,
): Promise<boolean> {
  if (invitation.invited_by !== null) {
    const member = await tx
      .selectFrom('memberships')
      .select('role')
      .where('workspace_id', '=', invitation.workspace_id)
      .where('user_id', '=', invitation.invited_by)
      .executeTakeFirst();
    return member !== undefined && roleAtLeast(member.role, invitation.role);
  }
  if (invitation.invited_by_key_id !== null) {
    const key = await tx
      .selectFrom('api_keys')
      .select('role')
      .where('id', '=', invitation.invited_by_key_id)
      .where('workspace_id', '=', invitation.workspace_id)
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', sql<Date>`now()`)]))
      .executeTakeFirst();
    return key !== undefined && roleAtLeast(key.role, invitation.role);
  }
  return true;
}

/**
 * Accepts an invitation for the signed-in user, whose email must be the invited one. An
 * expired, revoked or used invitation is 410 invitation_invalid, and so is one whose sender is
 * no longer a member (or live key) of a role at least the invited one. The invitation row is
 * locked, and the workspace's lock (taken by removals and role changes too) is held while the
 * sender is checked, so a token is used once and a removal cannot slip between check and join.
 */
export async function acceptInvitation(
  services: Services,
  token: string,
  user: { id: string; email: string | null },
  actor: Actor,
): Promise<WorkspaceView> {
  return services.db.transaction().execute(async (tx) => {
    const invitation = await tx
      .selectFrom('invitations')
      .selectAll()
      .where('token_hash', '=', tokenHash(token))
      .forUpdate()
      .executeTakeFirst();
    if (!invitation || invitation.accepted_at || invitation.revoked_at || invitation.expires_at.getTime() <= Date.now()) {
      throw new ApiError('invitation_invalid', 'This invitation has expired, was revoked or was used already.');
    }
    if (normalizeEmail(user.email ?? '') !== normalizeEmail(invitation.email)) {
      throw new ApiError('invitation_email_mismatch', 'This invitation was sent to another email; sign in with that email to accept it.');
    }
    const workspace = await lockWorkspace(tx, invitation.workspace_id);
    if (!(await senderStillMay(tx, invitation))) {
      throw new ApiError(
        'invitation_invalid',
        'Whoever sent this invitation may no longer invite with this role; ask a current admin for a new one.',
      );
    }
    const existing = await tx
      .selectFrom('memberships')
      .select('role')
      .where('workspace_id', '=', workspace.id)
      .where('user_id', '=', user.id)
      .executeTakeFirst();
    await tx
      .updateTable('invitations')
      .set({ accepted_at: sql<Date>`now()`, accepted_by: user.id })
      .where('id', '=', invitation.id)
      .execute();
    if (existing) return renderWorkspace(workspace, existing.role);
    await addMember(tx, workspace.id, user.id, invitation.role, actor, { invitation_id: invitation.id });
    return renderWorkspace(workspace, invitation.role);
  });
}
