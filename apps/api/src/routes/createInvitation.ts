import type { RequestHandler } from 'express';
import { createInvitation as create, renderInvitation, type Role } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { caller } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';

/**
 * POST /v1/workspaces/{workspace_id}/invitations — 201; the token is shown once, and mailed
 * through the outbox when SMTP_URL is set (the mail sender is kicked after the commit).
 */
export const createInvitation = ({ services, mailer }: AppDeps): RequestHandler => async (req, res) => {
  const { email, role } = req.body as { email: string; role: Role };
  const created = await create(services, tenantOf(res).workspace.id, email, role, caller(req, res));
  if (created.mailed) mailer?.kick();
  res.status(201).json({ ...renderInvitation(created.invitation), token: created.token, accept_url: created.acceptUrl });
};
