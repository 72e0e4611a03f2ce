import type { RouteDef } from '../app';
import { acceptInvitation } from './acceptInvitation';
import { changePassword } from './changePassword';
import { confirmPasswordReset } from './confirmPasswordReset';
import { createInvitation } from './createInvitation';
import { createKey } from './createKey';
import { createWorkspace } from './createWorkspace';
import { getSession } from './getSession';
import { listAuditEvents } from './listAuditEvents';
import { listDevMail } from './listDevMail';
import { listInvitations } from './listInvitations';
import { previewInvitation } from './previewInvitation';
import { listKeys } from './listKeys';
import { listMembers } from './listMembers';
import { listWorkspaces } from './listWorkspaces';
import { logIn } from './logIn';
import { logOut } from './logOut';
import { removeMember } from './removeMember';
import { requestPasswordReset } from './requestPasswordReset';
import { resendVerification } from './resendVerification';
import { revokeInvitation } from './revokeInvitation';
import { revokeKey } from './revokeKey';
import { updateKey } from './updateKey';
import { signUp } from './signUp';
import { updateMember } from './updateMember';
import { updateWorkspace } from './updateWorkspace';
import { verifyEmail } from './verifyEmail';

/** Routes of users, sessions, workspaces, members, invitations, keys and the audit log (extensions.md 1-4). */
export const accountRoutes: RouteDef[] = [
  { method: 'post', path: '/v1/auth/signup', handler: signUp },
  { method: 'post', path: '/v1/auth/login', handler: logIn },
  { method: 'get', path: '/v1/auth/session', handler: getSession },
  { method: 'post', path: '/v1/auth/logout', handler: logOut },
  { method: 'post', path: '/v1/auth/password', handler: changePassword },
  { method: 'post', path: '/v1/auth/verify', handler: verifyEmail },
  { method: 'post', path: '/v1/auth/verify/resend', handler: resendVerification },
  { method: 'post', path: '/v1/auth/password-reset', handler: requestPasswordReset },
  { method: 'post', path: '/v1/auth/password-reset/confirm', handler: confirmPasswordReset },
  { method: 'get', path: '/v1/dev/mail', handler: listDevMail },
  { method: 'get', path: '/v1/workspaces', handler: listWorkspaces },
  { method: 'post', path: '/v1/workspaces', handler: createWorkspace },
  { method: 'patch', path: '/v1/workspaces/:workspace_id', handler: updateWorkspace },
  { method: 'get', path: '/v1/workspaces/:workspace_id/members', handler: listMembers },
  { method: 'patch', path: '/v1/workspaces/:workspace_id/members/:user_id', handler: updateMember },
  { method: 'delete', path: '/v1/workspaces/:workspace_id/members/:user_id', handler: removeMember },
  { method: 'post', path: '/v1/workspaces/:workspace_id/invitations', handler: createInvitation },
  { method: 'get', path: '/v1/workspaces/:workspace_id/invitations', handler: listInvitations },
  { method: 'delete', path: '/v1/workspaces/:workspace_id/invitations/:invitation_id', handler: revokeInvitation },
  { method: 'post', path: '/v1/invitations/accept', handler: acceptInvitation },
  { method: 'get', path: '/v1/invitations/preview', handler: previewInvitation },
  { method: 'post', path: '/v1/keys', handler: createKey },
  { method: 'get', path: '/v1/keys', handler: listKeys },
  { method: 'delete', path: '/v1/keys/:key_id', handler: revokeKey },
  { method: 'patch', path: '/v1/keys/:key_id', handler: updateKey },
  { method: 'get', path: '/v1/audit-events', handler: listAuditEvents },
];
