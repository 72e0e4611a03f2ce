import type { RequestHandler } from 'express';
import { listMembers as list } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** GET /v1/workspaces/{workspace_id}/members — oldest first. */
export const listMembers = ({ services }: AppDeps): RequestHandler => async (_req, res) => {
  res.json(await list(services.db, tenantOf(res).workspace.id));
};
