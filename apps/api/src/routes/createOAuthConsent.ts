import type { RequestHandler } from 'express';
import { consentToClient, type Role } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { principalOf } from '../middleware/auth';
import { actor } from '../middleware/client';

interface ConsentBody {
  client_id: string;
  redirect_uri: string;
  code_challenge: string;
  code_challenge_method: 'S256';
  state?: string;
  scope?: string;
  workspace_id: string;
  role: Role;
}

/** POST /v1/oauth/consent — the signed-in user lets an agent act in a workspace with a role; 200 with where to send the browser. */
export const createOAuthConsent = ({ services }: AppDeps): RequestHandler => async (req, res) => {
  const body = req.body as ConsentBody;
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
};
