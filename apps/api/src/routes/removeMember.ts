import type { RequestHandler } from 'express';
import { removeMember as remove } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { caller } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';

/** DELETE /v1/workspaces/{workspace_id}/members/{user_id} — 204; members may remove themselves. */
export const removeMember = ({ services }: AppDeps): RequestHandler => async (req, res) => {
  await remove(services, tenantOf(res).workspace.id, String(req.params.user_id), caller(req, res));
  res.status(204).end();
};
