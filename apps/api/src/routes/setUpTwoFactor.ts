import { setUpTwoFactor as setUp } from '@sdx/domain/api';
import { principalOf } from '../middleware/auth';
import { route } from './route';

/** POST /v1/auth/2fa/setup — a new TOTP secret, active once POST /v1/auth/2fa/enable confirms a code of it. */
export const setUpTwoFactor = route('setUpTwoFactor', {
  access: 'session',
  handler: async ({ deps: { services }, res }) => {
    const principal = principalOf(res);
    if (principal.kind !== 'session') throw new Error('session route reached without a session');
    res.json(await setUp(services, principal.user.id));
  },
});
