import { timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import {
  ApiError,
  RequestValidationError,
  resolveSession,
  touchApiKey,
  touchSession,
  type Services,
  type Tenant,
  type UserView,
} from '@sdx/domain/api';
import type { SessionRow } from '@sdx/db';
import { isStorableText } from './input';
import { sessionToken } from './session-cookie';

/** The credential of a request: X-API-Key, or an Authorization header with the Bearer scheme. */
export function presentedKey(headers: { 'x-api-key'?: string | string[]; authorization?: string }): string | null {
  const direct = headers['x-api-key'];
  const value = Array.isArray(direct) ? direct[0] : direct;
  if (value && value.trim()) return value.trim();
  const auth = headers.authorization;
  if (auth) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (match) return match[1];
  }
  return null;
}

const WORKSPACE_ID_MAX = 36;
/** Methods that change nothing: a cookie caller needs no CSRF token for them. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Who is calling: an API key, or a signed-in user through the session cookie. */
export type Principal = { kind: 'api_key'; keyId: string } | { kind: 'session'; session: SessionRow; user: UserView };

export function principalOf(res: Response): Principal {
  const principal = res.locals.principal as Principal | undefined;
  if (!principal) throw new Error('route reached without authentication');
  return principal;
}

function workspaceHeader(req: Request): string | null {
  const value = req.get('x-workspace-id');
  if (value === undefined) return null;
  if (value.length > WORKSPACE_ID_MAX) {
    throw new RequestValidationError([
      {
        loc: ['header', 'x-workspace-id'],
        msg: `String should have at most ${WORKSPACE_ID_MAX} characters`,
        type: 'string_too_long',
        input: value,
        ctx: { max_length: WORKSPACE_ID_MAX },
      },
    ]);
  }
  return value;
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Resolves the caller and the workspace it acts on, once per request. An API key wins over a
 * cookie. The workspace is the path's `workspace_id` when the route has one (not a member: 404
 * workspace_not_found), else X-Workspace-ID (not a member: 403 workspace_forbidden), else the
 * key's workspace or the user's personal one. A cookie write without the session's CSRF token
 * is 403 csrf_failed. No cache: a revoked key or an ended session fails on its next request.
 * Secrets are never logged (see the logger's redaction). With `actsOnWorkspace: false` (routes
 * of the signed-in user themselves: the session, sign-out, the password, two-factor setup, new
 * workspaces, accepting an invitation, the list of the user's workspaces), a workspace's
 * require_two_factor does not refuse the session: a user it refuses can still see where they
 * stand, turn it on, switch workspace and sign out.
 */
export function authenticate(services: Services, options: { actsOnWorkspace?: boolean } = {}): RequestHandler {
  const actsOnWorkspace = options.actsOnWorkspace !== false;
  return async (req, res, next) => {
    const header = workspaceHeader(req);
    const pathWorkspace = typeof req.params.workspace_id === 'string' ? req.params.workspace_id : null;
    const wanted = pathWorkspace ?? header;
    const notMember = (id: string) =>
      pathWorkspace
        ? new ApiError('workspace_not_found', 'No such workspace among yours.', { workspace_id: id })
        : new ApiError('workspace_forbidden', 'This credential does not grant access to that workspace.', { workspace_id: id });

    const secret = presentedKey(req.headers);
    if (secret) {
      const found = await services.keys.authenticate(secret);
      if (!found) throw new ApiError('invalid_api_key', 'The API key is unknown, revoked or expired.');
      if (wanted !== null && wanted !== found.workspace.id) throw notMember(wanted);
      const tenant: Tenant = {
        workspace: found.workspace,
        keyId: found.key.id,
        role: found.key.role,
        userId: null,
        keyCapped: found.key.monthly_credit_cap !== null,
      };
      res.locals.tenant = tenant;
      res.locals.principal = { kind: 'api_key', keyId: found.key.id } satisfies Principal;
      next();
      return;
    }

    const token = sessionToken(req, services.config.nodeEnv === 'production');
    if (!token) {
      throw new ApiError(
        'missing_authentication',
        'Send an API key in X-API-Key or as Authorization: Bearer <key>, or sign in for a session cookie.',
      );
    }
    // A workspace ID Postgres could not even store names no workspace of the caller's.
    if (wanted !== null && !isStorableText(wanted)) throw notMember(wanted);
    const resolved = await resolveSession(services.db, token, wanted);
    if (!resolved) throw new ApiError('missing_authentication', 'The session has ended or expired; sign in again.');
    if (!SAFE_METHODS.has(req.method) && !sameSecret(req.get('x-csrf-token') ?? '', resolved.session.csrf_token)) {
      throw new ApiError('csrf_failed', 'A cookie-authenticated write needs X-CSRF-Token with the csrf_token of the session.');
    }
    if (!resolved.workspace || !resolved.role) throw notMember(wanted ?? '');
    if (resolved.workspace.require_two_factor && !resolved.user.two_factor_enabled && actsOnWorkspace) {
      throw new ApiError(
        'two_factor_required',
        'This workspace requires two-factor sign-in: turn it on for your account (POST /v1/auth/2fa/setup, then /v1/auth/2fa/enable).',
      );
    }
    const tenant: Tenant = { workspace: resolved.workspace, keyId: null, role: resolved.role, userId: resolved.user.id };
    res.locals.tenant = tenant;
    res.locals.principal = { kind: 'session', session: resolved.session, user: resolved.user } satisfies Principal;
    next();
  };
}

/**
 * Records the key's or the session's last use, at most once a minute each, and only for
 * requests the rate limiter let through (a 429 or 503 writes nothing).
 */
export function recordKeyUse(services: Services): RequestHandler {
  const lastWrite = new Map<string, number>();
  return (_req, res, next) => {
    const principal = res.locals.principal as Principal | undefined;
    const now = Date.now();
    if (principal?.kind === 'api_key' && now - (lastWrite.get(principal.keyId) ?? 0) > 60_000) {
      lastWrite.set(principal.keyId, now);
      if (lastWrite.size > 10_000) lastWrite.clear();
      touchApiKey(services.db, principal.keyId).catch((err) => services.log.warn({ err }, 'could not record key use'));
    } else if (principal?.kind === 'session' && now - principal.session.last_seen_at.getTime() > 60_000) {
      touchSession(services.db, principal.session.id).catch((err) => services.log.warn({ err }, 'could not record session use'));
    }
    next();
  };
}
