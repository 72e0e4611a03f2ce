import type { RequestHandler } from 'express';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** GET /v1/account */
export const getAccount = (_deps: ApiDeps): RequestHandler => (_req, res) => {
  const { workspace, keyId, role } = tenantOf(res);
  res.json({
    organization_id: workspace.id,
    organization_name: workspace.name,
    monthly_quota: workspace.monthly_quota,
    rate_limit_per_minute: workspace.rate_limit_per_minute,
    max_result_limit: workspace.max_result_limit,
    max_active_jobs: workspace.max_active_jobs,
    authenticated_key_id: keyId,
    auth_type: 'api_key',
    role,
    user: null,
    workspaces: [{ id: workspace.id, name: workspace.name, kind: workspace.kind === 'personal' ? 'personal' : 'team', role: role ?? 'owner' }],
  });
};
