import { verificationEmail, verifyEmail as verify } from '@sdx/domain/api';
import { clientMeta } from '../middleware/client';
import { sendSignedIn } from './signed-in';
import { route } from './route';

/**
 * POST /v1/auth/verify `{token, password}` — the email verified with the password of the
 * sign-up that sent the link, and the user signed in. A used, expired or unknown token: 410
 * verification_invalid. A wrong password: 401 invalid_credentials, counted as a failed sign-in
 * for the token's email and client address (429 past the limit), and the link stays usable.
 */
export const verifyEmail = route('verifyEmail', {
  access: 'public',
  handler: async ({ deps: { services, loginLimiter }, req, res }, body) => {
    const { token, password } = body;
    const meta = clientMeta(req);
    const address = meta.ip ?? 'unknown';
    const email = await verificationEmail(services, token);
    await loginLimiter.attempt(email, address);
    const signed = await verify(services, token, password, meta);
    await loginLimiter.succeeded(email, address);
    sendSignedIn(res, services, signed, 200);
  },
});
