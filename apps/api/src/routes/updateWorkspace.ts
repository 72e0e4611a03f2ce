import type { RequestHandler } from 'express';
import { renameWorkspace, type Role } from '@sdx/domain';
import type { AppDeps } from '../deps';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';

/** PATCH /v1/workspaces/{workspace_id} — rename (owner). */
export const updateWorkspace = ({ services }: AppDeps): RequestHandler => async (req, res) => {
  const { name } = req.body as { name: string };
  const tenant = tenantOf(res);
  res.json(await renameWorkspace(services, tenant.workspace.id, name.trim(), tenant.role as Role, actor(req, res)));
};
