import { signUp as signUpUser } from '@sdx/domain/api';
import { clientMeta } from '../middleware/client';
import { sendSignedIn } from './signed-in';
import { route } from './route';

/**
 * POST /v1/auth/signup — at most SIGNUP_LIMIT_PER_HOUR per client address. With email
 * verification on: 202 {verification_required: true}, no session, whether the email is new or
 * taken. Off: 201 with the user, their personal workspace, the CSRF token and the session cookie.
 */
export const signUp = route('signUp', {
  access: 'public',
  handler: async ({ deps: { services, loginLimiter, mailer }, req, res }, body) => {
    const meta = clientMeta(req);
    await loginLimiter.signUp(meta.ip ?? 'unknown');
    const result = await signUpUser(services, { email: body.email, password: body.password, displayName: body.display_name ?? null }, meta);
    if ('verificationRequired' in result) {
      mailer?.kick();
      res.status(202).json({ verification_required: true });
      return;
    }
    sendSignedIn(res, services, result.signedIn, 201);
  },
});
