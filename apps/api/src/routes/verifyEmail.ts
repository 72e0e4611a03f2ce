import type { RequestHandler } from 'express';
import { verifyEmail as verify } from '@sdx/domain';
import type { AppDeps } from '../deps';
import { clientMeta } from '../middleware/client';
import { sendSignedIn } from './signed-in';

/** POST /v1/auth/verify — the email verified and the user signed in; 410 verification_invalid. */
export const verifyEmail = ({ services }: AppDeps): RequestHandler => async (req, res) => {
  const { token } = req.body as { token: string };
  sendSignedIn(res, services, await verify(services, token, clientMeta(req)), 200);
};
