import { createInvitation as create, renderInvitation } from '@sdx/domain/api';
import { caller } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/**
 * POST /v1/workspaces/{workspace_id}/invitations — 201; the token is shown once, and mailed
 * through the outbox when SMTP_URL is set (the mail sender is kicked after the commit).
 */
export const createInvitation = route('createInvitation', {
  access: 'admin',
  handler: async ({ deps: { services, mailer }, req, res }, body) => {
    const { email, role } = body;
    const created = await create(services, tenantOf(res).workspace.id, email, role, caller(req, res));
    if (created.mailed) mailer?.kick();
    res.status(201).json({ ...renderInvitation(created.invitation), token: created.token, accept_url: created.acceptUrl });
  },
});
