import type { RequestHandler } from 'express';
import { signUp as signUpUser } from '@sdx/domain';
import type { AppDeps } from '../deps';
import { clientMeta } from '../middleware/client';
import { setSessionCookie } from '../middleware/session-cookie';

interface SignUpBody {
  email: string;
  password: string;
  display_name?: string | null;
}

/** POST /v1/auth/signup — 201 with the user, their personal workspace, the CSRF token, and the session cookie. */
export const signUp = ({ services }: AppDeps): RequestHandler => async (req, res) => {
  const body = req.body as SignUpBody;
  const signed = await signUpUser(services, { email: body.email, password: body.password, displayName: body.display_name ?? null }, clientMeta(req));
  setSessionCookie(res, signed.started.token, services.config.nodeEnv === 'production');
  res.status(201).json({ user: signed.user, workspaces: signed.workspaces, default_workspace_id: signed.defaultWorkspaceId, csrf_token: signed.started.session.csrf_token });
};
