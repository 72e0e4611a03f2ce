import { acceptInvitation as accept } from '@sdx/domain/api';
import { principalOf } from '../middleware/auth';
import { actor } from '../middleware/client';
import { route } from './route';

/** POST /v1/invitations/accept — 200, the workspace joined, for the signed-in user the invitation names. */
export const acceptInvitation = route('acceptInvitation', {
  access: 'session',
  handler: async ({ deps: { services }, req, res }, body) => {
    const principal = principalOf(res);
    if (principal.kind !== 'session') throw new Error('session route reached without a session');
    const { token } = body;
    res.json(await accept(services, token, principal.user, actor(req, res)));
  },
});
