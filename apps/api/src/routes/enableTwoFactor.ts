import { enableTwoFactor as enable } from '@sdx/domain/api';
import { principalOf } from '../middleware/auth';
import { clientMeta } from '../middleware/client';
import { route } from './route';

/**
 * POST /v1/auth/2fa/enable — a current code of the pending secret turns two-factor sign-in on;
 * the answer carries the recovery codes, shown once. A wrong code is 401 invalid_otp and counts
 * as a failed sign-in for the user's email.
 */
export const enableTwoFactor = route('enableTwoFactor', {
  access: 'session',
  handler: async ({ deps: { services, loginLimiter }, req, res }, body) => {
    const principal = principalOf(res);
    if (principal.kind !== 'session') throw new Error('session route reached without a session');
    const { code } = body;
    const meta = clientMeta(req);
    const email = principal.user.email ?? principal.user.id;
    const address = meta.ip ?? 'unknown';
    await loginLimiter.attempt(email, address);
    const codes = await enable(services, principal.user.id, code, meta);
    await loginLimiter.succeeded(email, address);
    res.json(codes);
  },
});
