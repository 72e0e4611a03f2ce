import type { RequestHandler } from 'express';
import { revokeInvitation as revoke } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';

/** DELETE /v1/workspaces/{workspace_id}/invitations/{invitation_id} — 204. */
export const revokeInvitation = ({ services }: AppDeps): RequestHandler => async (req, res) => {
  await revoke(services, tenantOf(res).workspace.id, String(req.params.invitation_id), actor(req, res));
  res.status(204).end();
};
