import type { RequestHandler } from 'express';
import { updateWorkspace as update } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';

/**
 * PATCH /v1/workspaces/{workspace_id} — rename, and/or require two-factor sign-in of session
 * callers (owner; turning it on needs the caller's own two-factor sign-in, else 409
 * two_factor_required).
 */
export const updateWorkspace = ({ services }: AppDeps): RequestHandler => async (req, res) => {
  const { name, require_two_factor: requireTwoFactor } = req.body as { name?: string; require_two_factor?: boolean };
  res.json(await update(services, tenantOf(res), { name: name?.trim(), requireTwoFactor }, actor(req, res)));
};
