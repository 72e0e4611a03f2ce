import type { RequestHandler } from 'express';
import { listInvitations as list, renderInvitation } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** GET /v1/workspaces/{workspace_id}/invitations — pending ones, newest first, without tokens. */
export const listInvitations = ({ services }: AppDeps): RequestHandler => async (_req, res) => {
  res.json((await list(services.db, tenantOf(res).workspace.id)).map(renderInvitation));
};
