import { confirmPasswordReset as confirm } from '@sdx/domain/api';
import { clientMeta } from '../middleware/client';
import { route } from './route';

/**
 * POST /v1/auth/password-reset/confirm — 204: every session of the user ended, every OAuth grant
 * they gave revoked, and with `revoke_keys: true` every key they made; 410 reset_token_invalid.
 */
export const confirmPasswordReset = route('confirmPasswordReset', {
  access: 'public',
  handler: async ({ deps: { services }, req, res }, body) => {
    const { token, new_password: password, revoke_keys: revokeKeys } = body;
    await confirm(services, token, password, { revokeKeys: revokeKeys === true, ip: clientMeta(req).ip });
    res.status(204).end();
  },
});
