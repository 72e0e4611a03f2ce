import type { RequestHandler } from 'express';
import { ApiError, type Role, roleAtLeast, type Tenant } from '@sdx/domain/api';
import type { Principal } from './auth';

/**
 * Who may call a route: `public` (no credentials, not rate limited), `session` (a signed-in user,
 * whatever their role), or the least role of extensions.md 2 in the workspace the request acts on.
 */
export type Access = 'public' | 'session' | Role;

/**
 * The one place roles are enforced. It runs after authentication on every non-public route,
 * with the access its `route()` declaration gives (routes/route.ts).
 */
export function requireAccess(access: Exclude<Access, 'public'>): RequestHandler {
  return (_req, res, next) => {
    if (access === 'session') {
      if ((res.locals.principal as Principal | undefined)?.kind !== 'session') {
        throw new ApiError('forbidden', 'This call needs a signed-in user (the session cookie), not an API key.', {
          required_auth: 'session',
        });
      }
    } else if (!roleAtLeast((res.locals.tenant as Tenant | undefined)?.role, access)) {
      throw new ApiError('forbidden', `This call needs the ${access} role in the workspace.`, { required_role: access });
    }
    next();
  };
}
