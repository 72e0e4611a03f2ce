import { consentToClient } from '@sdx/domain/api';
import { principalOf } from '../middleware/auth';
import { actor } from '../middleware/client';
import { route } from './route';

/** POST /v1/oauth/consent — the signed-in user lets an agent act in a workspace with a role; 200 with where to send the browser. */
export const createOAuthConsent = route('createOAuthConsent', {
  access: 'session',
  handler: async ({ deps: { services }, req, res }, body) => {
    const principal = principalOf(res);
    if (principal.kind !== 'session') throw new Error('createOAuthConsent reached without a session');
    const request = {
      clientId: body.client_id,
      redirectUri: body.redirect_uri,
      codeChallenge: body.code_challenge,
      codeChallengeMethod: body.code_challenge_method,
      state: body.state,
      scope: body.scope,
      workspaceId: body.workspace_id,
      role: body.role,
    };
    const user = { userId: principal.user.id, twoFactorEnabled: principal.user.two_factor_enabled, actor: actor(req, res) };
    // The answer carries a code: no cache may keep it.
    res.set('Cache-Control', 'no-store').json(await consentToClient(services.db, request, user, services.clock.now()));
  },
});
