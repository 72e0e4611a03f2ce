import { ApiError, checkCredentials, signIn } from '@sdx/domain/api';
import { clientMeta } from '../middleware/client';
import { sendSignedIn } from './signed-in';
import { route } from './route';

/**
 * POST /v1/auth/login — 200 with the user, their workspaces, the CSRF token and the session
 * cookie. A wrong password and an unknown email get the same 401 invalid_credentials after the
 * same password check; attempts are limited per email and per client address. The right
 * password before verification: 403 email_not_verified; with two-factor sign-in on, a missing
 * `otp` is 401 otp_required and a wrong one 401 invalid_otp; both stay counted.
 */
export const logIn = route('logIn', {
  access: 'public',
  handler: async ({ deps: { services, loginLimiter }, req, res }, body) => {
    const { email, password, otp } = body;
    const meta = clientMeta(req);
    const address = meta.ip ?? 'unknown';
    await loginLimiter.attempt(email, address);
    const user = await checkCredentials(services.db, email, password);
    if (!user) throw new ApiError('invalid_credentials', 'The email or the password is wrong.');
    // Only a whole sign-in gives the attempt back: a right password with a missing or wrong code
    // stays counted, or guessing codes could clear its own count.
    const signed = await signIn(services, user, otp, meta);
    await loginLimiter.succeeded(email, address);
    sendSignedIn(res, services, signed, 200);
  },
});
