import type { Access } from '../middleware/access';

/**
 * The access of every route, declared once, beside the route table (app.ts ROUTES), keyed by
 * `METHOD path`. The app refuses to start when a route has no entry here, and the security
 * sweep (apps/api/test/security-sweep.test.ts) tests every entry.
 */
export const ROUTE_ACCESS: Readonly<Record<string, Access>> = {
  'GET /healthz': 'public',
  'GET /readyz': 'public',
  'GET /metrics': 'public',
  'GET /openapi.yaml': 'public',
  'GET /openapi.json': 'public',
  'GET /docs': 'public',
  'GET /docs/redoc.standalone.js': 'public',
  'GET /v1/platforms': 'public',
  'GET /v1/account': 'viewer',
  'GET /v1/usage/current': 'viewer',
  'GET /v1/usage/daily': 'viewer',
  // A quote writes nothing, but it answers for the create calls: the roles that may make them.
  'POST /v1/quotes': 'member',
  'POST /v1/extract': 'member',
  'POST /v1/jobs': 'member',
  'GET /v1/jobs': 'viewer',
  'GET /v1/jobs/:job_id': 'viewer',
  'POST /v1/jobs/:job_id/cancel': 'member',
  'GET /v1/jobs/:job_id/export': 'viewer',
  'GET /v1/jobs/:job_id/items': 'viewer',
  'POST /v1/batches': 'member',
  'GET /v1/batches': 'viewer',
  'GET /v1/batches/:batch_id': 'viewer',
  'POST /v1/batches/:batch_id/cancel': 'member',
  'GET /v1/batches/:batch_id/export': 'viewer',
  'POST /v1/schedules/preview': 'viewer',
  'POST /v1/schedules': 'member',
  'GET /v1/schedules': 'viewer',
  'GET /v1/schedules/:schedule_id': 'viewer',
  'PUT /v1/schedules/:schedule_id': 'member',
  'DELETE /v1/schedules/:schedule_id': 'member',
  'POST /v1/schedules/:schedule_id/pause': 'member',
  'POST /v1/schedules/:schedule_id/resume': 'member',
  'POST /v1/schedules/:schedule_id/run': 'member',
  'POST /v1/monitors': 'member',
  'GET /v1/monitors': 'viewer',
  'GET /v1/monitors/:monitor_id': 'viewer',
  'PATCH /v1/monitors/:monitor_id': 'member',
  'DELETE /v1/monitors/:monitor_id': 'member',
  'POST /v1/monitors/:monitor_id/pause': 'member',
  'POST /v1/monitors/:monitor_id/resume': 'member',
  'POST /v1/monitors/:monitor_id/run': 'member',
  'GET /v1/monitors/:monitor_id/runs': 'viewer',
  'GET /v1/monitors/:monitor_id/series': 'viewer',
  'GET /v1/monitors/:monitor_id/series/export': 'viewer',
  'GET /v1/monitors/:monitor_id/changes': 'viewer',

  'POST /v1/auth/signup': 'public',
  'POST /v1/auth/login': 'public',
  'GET /v1/auth/session': 'session',
  'POST /v1/auth/logout': 'session',
  'POST /v1/auth/password': 'session',
  'POST /v1/auth/2fa/setup': 'session',
  'POST /v1/auth/2fa/enable': 'session',
  'POST /v1/auth/2fa/disable': 'session',
  'POST /v1/auth/verify': 'public',
  'POST /v1/auth/verify/resend': 'public',
  'POST /v1/auth/password-reset': 'public',
  'POST /v1/auth/password-reset/confirm': 'public',
  // The local dev outbox: outside production and only to a caller on loopback (the route checks both).
  'GET /v1/dev/mail': 'public',
  'GET /v1/workspaces': 'viewer',
  'POST /v1/workspaces': 'session',
  'PATCH /v1/workspaces/:workspace_id': 'owner',
  'GET /v1/workspaces/:workspace_id/members': 'viewer',
  // Admins manage roles below owner; owners' memberships need an owner (checked with the target, in the domain).
  'PATCH /v1/workspaces/:workspace_id/members/:user_id': 'admin',
  // Anyone may leave; removing someone else needs admin, an owner needs an owner (domain).
  'DELETE /v1/workspaces/:workspace_id/members/:user_id': 'viewer',
  'POST /v1/workspaces/:workspace_id/invitations': 'admin',
  'GET /v1/workspaces/:workspace_id/invitations': 'viewer',
  'DELETE /v1/workspaces/:workspace_id/invitations/:invitation_id': 'admin',
  'POST /v1/invitations/accept': 'session',
  // The token is the secret: an invitation's page names its workspace and inviter before sign-in.
  'GET /v1/invitations/preview': 'public',
  'POST /v1/keys': 'admin',
  'GET /v1/keys': 'viewer',
  'DELETE /v1/keys/:key_id': 'admin',
  'PATCH /v1/keys/:key_id': 'admin',
  'GET /v1/audit-events': 'admin',

  'POST /v1/destinations': 'admin',
  'GET /v1/destinations': 'viewer',
  'GET /v1/destinations/:destination_id': 'viewer',
  'DELETE /v1/destinations/:destination_id': 'admin',
  'POST /v1/webhooks': 'admin',
  'GET /v1/webhooks': 'viewer',
  'GET /v1/webhooks/:webhook_id': 'viewer',
  'PATCH /v1/webhooks/:webhook_id': 'admin',
  'DELETE /v1/webhooks/:webhook_id': 'admin',
  'POST /v1/webhooks/:webhook_id/rotate-secret': 'admin',
  'POST /v1/webhooks/:webhook_id/test': 'admin',
  'GET /v1/webhooks/:webhook_id/deliveries': 'viewer',
  'POST /v1/webhooks/:webhook_id/deliveries/:delivery_id/redeliver': 'admin',
  'GET /v1/jobs/:job_id/events': 'viewer',
  'GET /v1/batches/:batch_id/events': 'viewer',

  'GET /v1/billing': 'viewer',
  'POST /v1/billing/checkout': 'admin',
  'POST /v1/billing/subscription': 'admin',
  'DELETE /v1/billing/subscription': 'admin',
  'POST /v1/billing/portal': 'admin',
  'GET /v1/billing/invoices': 'admin',
  // Stripe-signed: the route checks the Stripe-Signature header itself.
  'POST /v1/billing/stripe/webhook': 'public',
  'GET /v1/billing/payments': 'admin',
  'PUT /v1/billing/auto-recharge': 'admin',
  'PUT /v1/billing/limits': 'admin',

  // OAuth 2.1 for remote agents (extensions-2.md 3): the protocol endpoints are public (apps/api/src/oauth);
  // the consent needs the signed-in user (session + CSRF), never a key or token.
  'GET /.well-known/oauth-protected-resource': 'public',
  'GET /.well-known/oauth-protected-resource/mcp': 'public',
  'GET /.well-known/oauth-authorization-server': 'public',
  'POST /oauth/register': 'public',
  'GET /oauth/authorize': 'public',
  'POST /oauth/token': 'public',
  'POST /oauth/revoke': 'public',
  'POST /v1/oauth/consent': 'session',
};

/** The declared access of a route; throws for a route that declares none, so it is never served open. */
export function accessOf(route: { method: string; path: string }): Access {
  const access = ROUTE_ACCESS[`${route.method.toUpperCase()} ${route.path}`];
  if (!access) throw new Error(`route ${route.method.toUpperCase()} ${route.path} declares no access in apps/api/src/routes/access.ts`);
  return access;
}
