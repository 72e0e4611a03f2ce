import { disableTwoFactor as disable } from '@sdx/domain/api';
import { principalOf } from '../middleware/auth';
import { clientMeta } from '../middleware/client';
import { route } from './route';

/**
 * POST /v1/auth/2fa/disable — 204 after the password and a current code (or an unused recovery
 * code). A wrong password (401 invalid_credentials) or code (401 invalid_otp) counts as a failed
 * sign-in for the user's email.
 */
export const disableTwoFactor = route('disableTwoFactor', {
  access: 'session',
  handler: async ({ deps: { services, loginLimiter }, req, res }, body) => {
    const principal = principalOf(res);
    if (principal.kind !== 'session') throw new Error('session route reached without a session');
    const { password, code } = body;
    const meta = clientMeta(req);
    const email = principal.user.email ?? principal.user.id;
    const address = meta.ip ?? 'unknown';
    await loginLimiter.attempt(email, address);
    await disable(services, principal.user.id, password, code, meta);
    await loginLimiter.succeeded(email, address);
    res.status(204).end();
  },
});
