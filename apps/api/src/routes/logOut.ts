import { endSession } from '@sdx/domain/api';
import { principalOf } from '../middleware/auth';
import { clearSessionCookie } from '../middleware/session-cookie';
import { route } from './route';

/** POST /v1/auth/logout — 204; the session ends on every process and the cookie is cleared. */
export const logOut = route('logOut', {
  access: 'session',
  handler: async ({ deps: { services }, res }) => {
    const principal = principalOf(res);
    if (principal.kind !== 'session') throw new Error('session route reached without a session');
    await endSession(services.db, principal.session.id);
    clearSessionCookie(res, services.config.nodeEnv === 'production');
    res.status(204).end();
  },
});
