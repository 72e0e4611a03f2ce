import type { Request, Response } from 'express';
import { apiKeyActive, resolveSession, type Services } from '@sdx/domain/api';
import { principalOf } from '../middleware/auth';
import { sessionToken } from '../middleware/session-cookie';
import { tenantOf } from '../middleware/tenant';
import type { StreamGuard } from './hub';

/**
 * The guard of an event stream: the workspace's bound (MAX_STREAMS_PER_WORKSPACE) and a check of
 * the credential the stream was opened with. A key holds while it is neither revoked nor
 * expired; a session while it has not ended or expired, its user is still a member of the
 * workspace, and the workspace does not require two-factor sign-in the user lacks (what the
 * authentication of a new request would ask).
 */
export function streamGuard(services: Services, req: Request, res: Response): StreamGuard {
  const workspaceId = tenantOf(res).workspace.id;
  const limit = services.config.maxStreamsPerWorkspace;
  const principal = principalOf(res);
  if (principal.kind === 'api_key') {
    const keyId = principal.keyId;
    return { workspaceId, limit, credential: keyId, stillValid: () => apiKeyActive(services.db, keyId) };
  }
  const token = sessionToken(req, services.config.nodeEnv === 'production') ?? '';
  return {
    workspaceId,
    limit,
    credential: `${principal.session.id}:${workspaceId}`,
    async stillValid() {
      const resolved = await resolveSession(services.db, token, workspaceId);
      if (!resolved?.workspace || !resolved.role) return false;
      return !(resolved.workspace.require_two_factor && !resolved.user.two_factor_enabled);
    },
  };
}
