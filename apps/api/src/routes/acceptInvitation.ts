import type { RequestHandler } from 'express';
import { acceptInvitation as accept } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { principalOf } from '../middleware/auth';
import { actor } from '../middleware/client';

/** POST /v1/invitations/accept — 200, the workspace joined, for the signed-in user the invitation names. */
export const acceptInvitation = ({ services }: AppDeps): RequestHandler => async (req, res) => {
  const principal = principalOf(res);
  if (principal.kind !== 'session') throw new Error('session route reached without a session');
  const { token } = req.body as { token: string };
  res.json(await accept(services, token, principal.user, actor(req, res)));
};
