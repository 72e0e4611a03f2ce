import type { Services } from '../context';
import { ApiError } from '../errors';
import { revokeKeysOf } from '../workspaces/api-keys';
import { hashPassword, verifyPassword } from './passwords';
import { endOtherSessions } from './sessions';

export interface PasswordChangeOptions {
  /** Also revoke every API key the user made (and the keys those keys made), in every workspace. */
  revokeApiKeys?: boolean;
  /** The client address of the request, for the audit events of the revocations. */
  ip?: string | null;
}

/**
 * Changes the password after checking the current one; every other session of the user ends.
 * With revokeApiKeys, the user's keys go in the same transaction, each audited as api_key.revoked
 * (actor the user, reason password_changed): the choice to make after a password was stolen.
 * Returns the IDs of the keys revoked.
 */
export async function changePassword(
  services: Services,
  userId: string,
  sessionId: string,
  current: string,
  next: string,
  options: PasswordChangeOptions = {},
): Promise<string[]> {
  const user = await services.db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirstOrThrow();
  if (!(await verifyPassword(user.password_hash, current))) throw new ApiError('invalid_credentials', 'The current password is wrong.');
  const passwordHash = await hashPassword(next);
  return services.db.transaction().execute(async (tx) => {
    await tx.updateTable('users').set({ password_hash: passwordHash, updated_at: new Date() }).where('id', '=', userId).execute();
    await endOtherSessions(tx, userId, sessionId);
    if (!options.revokeApiKeys) return [];
    return revokeKeysOf(tx, { userId, reason: 'password_changed', actor: { type: 'user', id: userId, ip: options.ip ?? null } });
  });
}
