import { sql } from 'kysely';
import type { Executor, UserRow } from '@sdx/db';
import { recordAudit } from '../audit/audit';
import type { Services } from '../context';
import { ApiError } from '../errors';
import { sealerOf } from '../sealing';
import { verifyPassword } from './passwords';
import type { ClientMeta } from './sessions';
import {
  asRecoveryCode,
  asTotpCode,
  matchTotp,
  newRecoveryCode,
  newTotpSecret,
  otpauthUrl,
  RECOVERY_CODE_COUNT,
  recoveryCodeHash,
} from './two-factor-codes';

/**
 * Two-factor sign-in (extensions-2.md 2 and 6): a TOTP secret per user, stored sealed
 * (sealing.ts), active once a code of it was confirmed; ten single-use recovery codes, stored by
 * hash; a code counts once per time step (users.two_factor_last_step, moved forward by a
 * conditional UPDATE, so two parallel requests cannot both use one code). The codes themselves
 * are in two-factor-codes.ts.
 */

export interface TwoFactorSetup {
  secret: string;
  otpauth_url: string;
}

const twoFactorEnabled = () =>
  new ApiError('two_factor_enabled', 'Two-factor sign-in is on already; turn it off first (POST /v1/auth/2fa/disable).');
const notSetUp = (what: string) => new ApiError('two_factor_not_set_up', what);
const invalidOtp = () =>
  new ApiError('invalid_otp', 'That code is not the current one, or it was used already: enter the code your authenticator app shows now.');

async function userRow(db: Executor, userId: string): Promise<UserRow> {
  return db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirstOrThrow();
}

async function personalWorkspaceId(db: Executor, userId: string): Promise<string> {
  const row = await db.selectFrom('workspaces').select('id').where('personal_user_id', '=', userId).executeTakeFirstOrThrow();
  return row.id;
}

/**
 * POST /v1/auth/2fa/setup: a new secret, not active until `enableTwoFactor` confirms a code of
 * it; it replaces a setup not yet confirmed. With two-factor sign-in on: 409 two_factor_enabled.
 */
export async function setUpTwoFactor(services: Services, userId: string): Promise<TwoFactorSetup> {
  const secret = newTotpSecret();
  const updated = await services.db
    .updateTable('users')
    .set({ two_factor_secret: sealerOf(services.config).seal(secret), two_factor_last_step: null, updated_at: services.clock.now() })
    .where('id', '=', userId)
    .where('two_factor_enabled_at', 'is', null)
    .returning('email')
    .executeTakeFirst();
  if (!updated) throw twoFactorEnabled();
  return { secret, otpauth_url: otpauthUrl(secret, updated.email) };
}

/**
 * POST /v1/auth/2fa/enable: a current code of the pending secret turns two-factor sign-in on
 * (the code's step counts as used) and returns ten new recovery codes, shown this once.
 */
export async function enableTwoFactor(
  services: Services,
  userId: string,
  code: string,
  meta: ClientMeta,
): Promise<{ recovery_codes: string[] }> {
  const user = await userRow(services.db, userId);
  if (user.two_factor_enabled_at) throw twoFactorEnabled();
  if (!user.two_factor_secret) throw notSetUp('Start with POST /v1/auth/2fa/setup.');
  const typed = asTotpCode(code);
  const step = typed ? matchTotp(sealerOf(services.config).open(user.two_factor_secret), typed, services.clock.now(), null) : null;
  if (step === null) throw invalidOtp();
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  await services.db.transaction().execute(async (tx) => {
    // Only the secret the code was checked against: a setup started meanwhile is not turned on.
    const enabled = await tx
      .updateTable('users')
      .set({ two_factor_enabled_at: services.clock.now(), two_factor_last_step: step, updated_at: services.clock.now() })
      .where('id', '=', userId)
      .where('two_factor_enabled_at', 'is', null)
      .where('two_factor_secret', '=', user.two_factor_secret)
      .returning('id')
      .executeTakeFirst();
    if (!enabled) throw twoFactorEnabled();
    await tx.deleteFrom('two_factor_recovery_codes').where('user_id', '=', userId).execute();
    await tx
      .insertInto('two_factor_recovery_codes')
      .values(codes.map((c) => ({ user_id: userId, code_hash: recoveryCodeHash(userId, c) })))
      .execute();
    await recordAudit(tx, {
      workspaceId: await personalWorkspaceId(tx, userId),
      action: 'user.two_factor_enabled',
      actor: { type: 'user', id: userId, ip: meta.ip },
      targetType: 'user',
      targetId: userId,
    });
  });
  return { recovery_codes: codes };
}

/**
 * POST /v1/auth/2fa/disable: the password and a current code (or an unused recovery code) turn
 * two-factor sign-in off; the secret and the recovery codes are deleted.
 */
export async function disableTwoFactor(
  services: Services,
  userId: string,
  password: string,
  code: string,
  meta: ClientMeta,
): Promise<void> {
  const user = await userRow(services.db, userId);
  if (!user.two_factor_enabled_at || !user.two_factor_secret) throw notSetUp('Two-factor sign-in is off.');
  if (!(await verifyPassword(user.password_hash, password))) throw new ApiError('invalid_credentials', 'The password is wrong.');
  await services.db.transaction().execute(async (tx) => {
    if (!(await useSecondFactor(tx, services, user, code))) throw invalidOtp();
    await tx
      .updateTable('users')
      .set({ two_factor_secret: null, two_factor_enabled_at: null, two_factor_last_step: null, updated_at: services.clock.now() })
      .where('id', '=', userId)
      .execute();
    await tx.deleteFrom('two_factor_recovery_codes').where('user_id', '=', userId).execute();
    await recordAudit(tx, {
      workspaceId: await personalWorkspaceId(tx, userId),
      action: 'user.two_factor_disabled',
      actor: { type: 'user', id: userId, ip: meta.ip },
      targetType: 'user',
      targetId: userId,
    });
  });
}

/**
 * The second factor at sign-in, after the password was checked. A user without two-factor
 * sign-in passes at once (no query). With it: no `otp` is 401 otp_required; a current code not
 * used before, or an unused recovery code, passes and is spent; anything else is 401
 * invalid_otp.
 */
export async function checkSecondFactor(services: Services, user: UserRow, otp: string | undefined): Promise<void> {
  if (!user.two_factor_enabled_at) return;
  if (otp === undefined || otp.trim() === '') {
    throw new ApiError(
      'otp_required',
      'Two-factor sign-in is on: send `otp`, the current code of your authenticator app or a recovery code.',
    );
  }
  if (!(await useSecondFactor(services.db, services, user, otp))) throw invalidOtp();
}

/**
 * Spends a code of the user's second factor: an authenticator code of a step after the last one
 * accepted (the step is moved forward only if no one moved it meanwhile), or an unused recovery
 * code (marked used only if it still was not). False when the code is neither.
 */
async function useSecondFactor(db: Executor, services: Services, user: UserRow, code: string): Promise<boolean> {
  const totp = asTotpCode(code);
  if (totp) {
    if (!user.two_factor_secret) return false;
    const lastStep = user.two_factor_last_step === null ? null : Number(user.two_factor_last_step);
    const step = matchTotp(sealerOf(services.config).open(user.two_factor_secret), totp, services.clock.now(), lastStep);
    if (step === null) return false;
    const moved = await db
      .updateTable('users')
      .set({ two_factor_last_step: step })
      .where('id', '=', user.id)
      .where('two_factor_enabled_at', 'is not', null)
      .where((eb) => eb.or([eb('two_factor_last_step', 'is', null), eb('two_factor_last_step', '<', sql<string>`${step}::bigint`)]))
      .returning('id')
      .executeTakeFirst();
    return moved !== undefined;
  }
  const recovery = asRecoveryCode(code);
  if (!recovery) return false;
  const used = await db
    .updateTable('two_factor_recovery_codes')
    .set({ used_at: services.clock.now() })
    .where('user_id', '=', user.id)
    .where('code_hash', '=', recoveryCodeHash(user.id, recovery))
    .where('used_at', 'is', null)
    .returning('user_id')
    .executeTakeFirst();
  return used !== undefined;
}
