import { signUpCredits } from '@sdx/config';
import type { Db, Tx, UserRow, WorkspaceRow } from '@sdx/db';
import { findUserByEmail, normalizeEmail } from '../identity/emails';
import { type Actor, recordAudit } from '../audit/audit';
import type { Services } from '../context';
import { ApiError } from '../errors';
import { newId } from '../ids';
import { createWorkspace } from '../workspaces/workspaces';
import { renderWorkspace } from '../workspaces/teams';
import type { Clock } from '../time';
import { hashPassword, verifyPassword } from './passwords';
import { type ClientMeta, startSession, startSignInSession } from './sessions';
import { type SignedIn, signedInAs } from './signed-in';
import { checkSecondFactor } from './two-factor';
import { mailSignupAttempt, mailVerification } from './verification';
import { renderUser } from './user-view';

export interface SignUpInput {
  email: string;
  password: string;
  displayName?: string | null;
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === '23505';
}

export interface NewUser {
  email: string;
  passwordHash: string;
  displayName?: string | null;
  /** Plan allowance of the personal workspace (0 until the email is verified, with verification on). */
  credits: number;
  /** False: the email waits for verification (email_verified_at null). Default true. */
  verified?: boolean;
}

/**
 * A user with their personal workspace (kind personal, the user its owner) and the audit event
 * of the sign-up, in the caller's transaction. Sign-up and first start's demo user both go
 * through it.
 */
export async function createUser(
  tx: Tx,
  clock: Clock,
  input: NewUser,
  by: { ip: string | null; actor?: Actor },
): Promise<{ user: UserRow; personal: WorkspaceRow }> {
  const email = normalizeEmail(input.email);
  const user = await tx
    .insertInto('users')
    .values({
      id: newId('usr'),
      email,
      display_name: input.displayName ?? null,
      password_hash: input.passwordHash,
      email_verified_at: input.verified === false ? null : clock.now(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const personal = await createWorkspace(tx, clock, {
    name: 'Personal',
    kind: 'personal',
    personalUserId: user.id,
    credits: input.credits,
  });
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

/** What sign-up answers: signed in at once, or (EMAIL_VERIFICATION on) a mail to follow and no session. */
export type SignUpResult = { signedIn: SignedIn } | { verificationRequired: true };

/**
 * Sign-up (extensions.md 1, extensions-2.md 2). With EMAIL_VERIFICATION off: the user, their
 * personal workspace (owner, plan allowance NEW_WORKSPACE_CREDITS), its audit event and the
 * first session, in one transaction; a taken email is 409 email_taken.
 *
 * With it on, a new email and a taken one get the same answer after the same work (a password
 * hash and one transaction that writes a mail): the new user waits for verification with a
 * personal workspace of no allowance and a verification mail; the owner of a taken email gets a
 * mail saying someone tried; an address that was never verified gets a new verification link.
 * Every link carries the password of the sign-up that sent it (accounts/verification.ts), so a
 * stranger who signed up with the address first cannot keep its owner out, nor get in.
 *
 * In production with verification off, the personal workspace gets no allowance
 * (`signUpCredits`): credits are not handed to emails nobody has proven.
 */
export async function signUp(services: Services, input: SignUpInput, meta: ClientMeta): Promise<SignUpResult> {
  if (!services.config.signupEnabled) throw new ApiError('signup_disabled', 'Sign-up is closed on this service.');
  const email = normalizeEmail(input.email);
  const verify = services.config.emailVerification;
  const passwordHash = await hashPassword(input.password);
  const existing = await findUserByEmail(services.db, email);
  if (existing) {
    if (!verify) throw new ApiError('email_taken', 'An account with this email exists; sign in instead.');
    await services.db
      .transaction()
      .execute((tx) =>
        existing.email_verified_at ? mailSignupAttempt(tx, services, email) : mailVerification(tx, services, existing, passwordHash),
      );
    return { verificationRequired: true };
  }
  try {
    return await services.db.transaction().execute(async (tx) => {
      const credits = verify ? 0 : signUpCredits(services.config);
      const created = await createUser(
        tx,
        services.clock,
        { email, passwordHash, displayName: input.displayName, credits, verified: !verify },
        { ip: meta.ip },
      );
      if (verify) {
        await mailVerification(tx, services, created.user, passwordHash);
        return { verificationRequired: true as const };
      }
      const started = await startSession(tx, created.user.id, meta);
      return {
        signedIn: {
          user: renderUser(created.user),
          workspaces: [renderWorkspace(created.personal, 'owner')],
          defaultWorkspaceId: null,
          started,
        },
      };
    });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    // A sign-up with the same email committed first.
    if (!verify) throw new ApiError('email_taken', 'An account with this email exists; sign in instead.');
    return { verificationRequired: true };
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

/**
 * Sign-in after the password was checked: 403 email_not_verified before the email is verified
 * (the password was right, so this tells nothing new), then the second factor when the user has
 * one (`checkSecondFactor`), then a session.
 */
export async function signIn(services: Services, user: UserRow, otp: string | undefined, meta: ClientMeta): Promise<SignedIn> {
  if (!user.email_verified_at) {
    throw new ApiError(
      'email_not_verified',
      'Verify your email first: follow the link we mailed you, or ask for another with POST /v1/auth/verify/resend.',
    );
  }
  await checkSecondFactor(services, user, otp);
  return signedInAs(services, user, await startSignInSession(services.db, user.id, meta));
}
