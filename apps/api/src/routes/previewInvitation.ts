import type { RequestHandler } from 'express';
import { previewInvitation as preview } from '@sdx/domain/api';
import type { AppDeps } from '../deps';

/** GET /v1/invitations/preview — 200, the invitation's workspace and inviter, for the holder of its token. */
export const previewInvitation = ({ services }: AppDeps): RequestHandler => async (req, res) => {
  res.json(await preview(services.db, String(req.query.token)));
};
