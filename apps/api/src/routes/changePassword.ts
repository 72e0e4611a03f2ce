import { changePassword as change } from '@sdx/domain/api';
import { principalOf } from '../middleware/auth';
import { clientMeta } from '../middleware/client';
import { route } from './route';

/**
 * POST /v1/auth/password — 204; every other session of the user ends. A wrong current password
 * is 401 invalid_credentials and counts as a failed sign-in for the user's email. With
 * revoke_api_keys, every key the user made, in every workspace, is revoked too.
 */
export const changePassword = route('changePassword', {
  access: 'session',
  handler: async ({ deps: { services, loginLimiter }, req, res }, body) => {
    const principal = principalOf(res);
    if (principal.kind !== 'session') throw new Error('session route reached without a session');
    const email = principal.user.email ?? principal.user.id;
    const { ip } = clientMeta(req);
    const address = ip ?? 'unknown';
    await loginLimiter.attempt(email, address);
    await change(services, principal.user.id, principal.session.id, body.current_password, body.new_password, {
      revokeApiKeys: body.revoke_api_keys === true,
      ip,
    });
    await loginLimiter.succeeded(email, address);
    res.status(204).end();
  },
});
