import type { RequestHandler } from 'express';
import { createTeamWorkspace } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';

/** POST /v1/workspaces — 201, a team workspace owned by the signed-in user. */
export const createWorkspace = ({ services }: AppDeps): RequestHandler => async (req, res) => {
  const { name } = req.body as { name: string };
  res.status(201).json(await createTeamWorkspace(services, tenantOf(res).userId!, name.trim(), actor(req, res)));
};
