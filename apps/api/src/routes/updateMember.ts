import type { RequestHandler } from 'express';
import { changeMemberRole, type Role } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { caller } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';

/** PATCH /v1/workspaces/{workspace_id}/members/{user_id} — change a member's role. */
export const updateMember = ({ services }: AppDeps): RequestHandler => async (req, res) => {
  const { role } = req.body as { role: Role };
  res.json(await changeMemberRole(services, tenantOf(res).workspace.id, String(req.params.user_id), role, caller(req, res)));
};
