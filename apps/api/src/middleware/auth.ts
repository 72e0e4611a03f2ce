import type { RequestHandler } from 'express';
import { ApiError, authenticateApiKey, RequestValidationError, touchApiKey, type Services, type Tenant } from '@sdx/domain';

/** The credential of a request: X-API-Key, or an Authorization header with the Bearer scheme. */
export function presentedKey(headers: { 'x-api-key'?: string | string[]; authorization?: string }): string | null {
  const direct = headers['x-api-key'];
  const value = Array.isArray(direct) ? direct[0] : direct;
  if (value && value.trim()) return value.trim();
  const auth = headers.authorization;
  if (auth) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (match) return match[1]!;
  }
  return null;
}

const WORKSPACE_ID_MAX = 36;

/**
 * Resolves the API key to the tenant once per request. No cache: a revoked key fails on its
 * next request. The key itself is never logged (see the logger's redaction).
 */
export function authenticate(services: Services): RequestHandler {
  return async (req, res, next) => {
    const secret = presentedKey(req.headers);
    if (!secret) {
      throw new ApiError('missing_authentication', 'Send an API key in X-API-Key or as Authorization: Bearer <key>.');
    }
    const found = await authenticateApiKey(services.batch.keyLookups, secret);
    if (!found) throw new ApiError('invalid_api_key', 'The API key is unknown or revoked.');
    const workspaceHeader = req.get('x-workspace-id');
    if (workspaceHeader !== undefined) {
      if (workspaceHeader.length > WORKSPACE_ID_MAX) {
        throw new RequestValidationError([
          {
            loc: ['header', 'x-workspace-id'],
            msg: `String should have at most ${WORKSPACE_ID_MAX} characters`,
            type: 'string_too_long',
            input: workspaceHeader,
            ctx: { max_length: WORKSPACE_ID_MAX },
          },
        ]);
      }
      if (workspaceHeader !== found.workspace.id) {
        throw new ApiError('workspace_forbidden', 'This API key does not grant access to that workspace.', { workspace_id: workspaceHeader });
      }
    }
    const tenant: Tenant = { workspace: found.workspace, keyId: found.key.id, role: found.key.role };
    res.locals.tenant = tenant;
    next();
  };
}

/**
 * Records the key's last use, at most once a minute per key and process, and only for requests
 * the rate limiter let through (a 429 or 503 writes nothing).
 */
export function recordKeyUse(services: Services): RequestHandler {
  const lastWrite = new Map<string, number>();
  return (_req, res, next) => {
    const keyId = (res.locals.tenant as Tenant | undefined)?.keyId;
    const now = Date.now();
    if (keyId && now - (lastWrite.get(keyId) ?? 0) > 60_000) {
      lastWrite.set(keyId, now);
      if (lastWrite.size > 10_000) lastWrite.clear();
      touchApiKey(services.db, keyId).catch((err) => services.log.warn({ err }, 'could not record key use'));
    }
    next();
  };
}
