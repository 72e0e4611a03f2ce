import type { Response } from 'express';
import type { Services, SignedIn } from '@sdx/domain/api';
import { setSessionCookie } from '../middleware/session-cookie';

/** The session cookie and the SignedInResponse body (sign-in, verification). */
export function sendSignedIn(res: Response, services: Services, signed: SignedIn, status: number): void {
  setSessionCookie(res, signed.started.token, services.config.nodeEnv === 'production');
  res.status(status).json({
    user: signed.user,
    workspaces: signed.workspaces,
    default_workspace_id: signed.defaultWorkspaceId,
    csrf_token: signed.started.session.csrf_token,
  });
}
