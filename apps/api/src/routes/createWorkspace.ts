import { createTeamWorkspace } from '@sdx/domain/api';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** POST /v1/workspaces — 201, a team workspace owned by the signed-in user. */
export const createWorkspace = route('createWorkspace', {
  access: 'session',
  handler: async ({ deps: { services }, req, res }, body) => {
    const { name } = body;
    res.status(201).json(await createTeamWorkspace(services, tenantOf(res).userId!, name.trim(), actor(req, res)));
  },
});
