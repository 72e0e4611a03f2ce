import type { RequestHandler } from 'express';
import { createInvitation as create, renderInvitation, type Role } from '@sdx/domain';
import type { AppDeps } from '../deps';
import { caller } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';

/** POST /v1/workspaces/{workspace_id}/invitations — 201; the token is shown once (and mailed when SMTP_URL is set). */
export const createInvitation = ({ services, mailer }: AppDeps): RequestHandler => async (req, res) => {
  const { email, role } = req.body as { email: string; role: Role };
  const created = await create(services, tenantOf(res).workspace.id, email, role, caller(req, res));
  const acceptUrl = `${services.config.appUrl}/console/invitations/accept?token=${encodeURIComponent(created.token)}`;
  if (mailer) {
    const { invitation } = created;
    void mailer.sendInvitation({ to: invitation.email, workspaceName: created.workspaceName, role: invitation.role, acceptUrl, token: created.token, expiresAt: invitation.expires_at });
  }
  res.status(201).json({ ...renderInvitation(created.invitation), token: created.token, accept_url: acceptUrl });
};
