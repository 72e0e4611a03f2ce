import type { Db, Tx, UserRow, WorkspaceRow } from '@sdx/db';
import { type Actor, recordAudit } from '../audit/audit';
import type { Services } from '../context';
import { ApiError } from '../errors';
import { newId } from '../ids';
import { createWorkspace } from '../workspaces/workspaces';
import { defaultWorkspaceAmong, listUserWorkspaces, renderWorkspace, type WorkspaceView } from '../workspaces/teams';
import type { Clock } from '../time';
import { hashPassword, verifyPassword } from './passwords';
import { type ClientMeta, endOtherSessions, startSession, type StartedSession } from './sessions';
import { renderUser, type UserView } from './user-view';

/** The User object of api-v1.md 2.1: all four keys present. */
/** Emails are kept as typed (trimmed) and compared case-insensitively (a unique index on lower(email)). */
export function normalizeEmail(email: string): string {
  return email.trim();
}

export async function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where((eb) => eb(eb.fn('lower', ['email']), '=', normalizeEmail(email).toLowerCase()))
    .executeTakeFirst();
}

export interface SignUpInput {
  email: string;
  password: string;
  displayName?: string | null;
}

export interface SignedIn {
  user: UserView;
  workspaces: WorkspaceView[];
  /** The workspace to open after sign-in (one of workspaces), or null for the personal one. */
  defaultWorkspaceId: string | null;
  started: StartedSession;
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === '23505';
}

export interface NewUser {
  email: string;
  passwordHash: string;
  displayName?: string | null;
  /** Plan allowance of the personal workspace. */
  credits: number;
}

/**
 * A user with their personal workspace (kind personal, the user its owner) and the audit event
 * of the sign-up, in the caller's transaction. Sign-up and first start's demo user both go
 * through it.
 */
export async function createUser(tx: Tx, clock: Clock, input: NewUser, by: { ip: string | null; actor?: Actor }): Promise<{ user: UserRow; personal: WorkspaceRow }> {
  const email = normalizeEmail(input.email);
  const user = await tx
    .insertInto('users')
    .values({ id: newId('usr'), email, display_name: input.displayName ?? null, password_hash: input.passwordHash })
    .returningAll()
    .executeTakeFirstOrThrow();
  const personal = await createWorkspace(tx, clock, { name: 'Personal', kind: 'personal', personalUserId: user.id, credits: input.credits });
  await tx.insertInto('memberships').values({ workspace_id: personal.id, user_id: user.id, role: 'owner' }).execute();
  await recordAudit(tx, {
    workspaceId: personal.id,
    action: 'user.signed_up',
    actor: by.actor ?? { type: 'user', id: user.id, ip: by.ip },
    targetType: 'user',
    targetId: user.id,
    data: { email },
  });
  return { user, personal };
}

/**
 * Sign-up: the user, their personal workspace (owner, plan allowance NEW_WORKSPACE_CREDITS),
 * its audit event and the first session, in one transaction.
 */
export async function signUp(services: Services, input: SignUpInput, meta: ClientMeta): Promise<SignedIn> {
  if (!services.config.signupEnabled) throw new ApiError('signup_disabled', 'Sign-up is closed on this service.');
  const email = normalizeEmail(input.email);
  if (await findUserByEmail(services.db, email)) throw new ApiError('email_taken', 'An account with this email exists; sign in instead.');
  const passwordHash = await hashPassword(input.password);
  try {
    return await services.db.transaction().execute(async (tx) => {
      const created = await createUser(tx, services.clock, { email, passwordHash, displayName: input.displayName, credits: services.config.newWorkspaceCredits }, { ip: meta.ip });
      const started = await startSession(tx, created.user.id, meta);
      return { user: renderUser(created.user), workspaces: [renderWorkspace(created.personal, 'owner')], defaultWorkspaceId: null, started };
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new ApiError('email_taken', 'An account with this email exists; sign in instead.');
    throw error;
  }
}

/**
 * The user whose email and password these are, or null. An unknown email costs the same
 * password check as a wrong password, so neither the answer nor its time tells them apart.
 */
export async function checkCredentials(db: Db, email: string, password: string): Promise<UserRow | null> {
  const user = await findUserByEmail(db, email);
  const ok = await verifyPassword(user?.password_hash ?? null, password);
  return ok && user ? user : null;
}

export async function signIn(services: Services, user: UserRow, meta: ClientMeta): Promise<SignedIn> {
  const started = await startSession(services.db, user.id, meta);
  const workspaces = await listUserWorkspaces(services.db, user.id);
  return { user: renderUser(user), workspaces, defaultWorkspaceId: defaultWorkspaceAmong(user.default_workspace_id, workspaces), started };
}

/** Changes the password after checking the current one; every other session of the user ends. */
export async function changePassword(services: Services, userId: string, sessionId: string, current: string, next: string): Promise<void> {
  const user = await services.db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirstOrThrow();
  if (!(await verifyPassword(user.password_hash, current))) throw new ApiError('invalid_credentials', 'The current password is wrong.');
  const passwordHash = await hashPassword(next);
  await services.db.transaction().execute(async (tx) => {
    await tx.updateTable('users').set({ password_hash: passwordHash, updated_at: new Date() }).where('id', '=', userId).execute();
    await endOtherSessions(tx, userId, sessionId);
  });
}
