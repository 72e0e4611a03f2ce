import type { RequestHandler } from 'express';
import { listUserWorkspaces, renderWorkspace, type Role } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { principalOf } from '../middleware/auth';
import { tenantOf } from '../middleware/tenant';

/** GET /v1/workspaces — a user's every workspace; for an API key, its one workspace. */
export const listWorkspaces = ({ services }: AppDeps): RequestHandler => async (_req, res) => {
  const principal = principalOf(res);
  if (principal.kind === 'session') {
    res.json(await listUserWorkspaces(services.db, principal.user.id));
    return;
  }
  const tenant = tenantOf(res);
  res.json([renderWorkspace(tenant.workspace, tenant.role as Role)]);
};
