import type { Request, Response } from 'express';
import { type Actor, actorOf, type Caller, type ClientMeta, type Role } from '@sdx/domain/api';
import { tenantOf } from './tenant';

/** The client's address (the TCP peer, or what TRUST_PROXY lets Express read) and user agent. */
export function clientMeta(req: Request): ClientMeta {
  return { ip: req.ip ?? null, userAgent: req.get('user-agent') ?? null };
}

/** Who the request acts as, for the audit log. */
export function actor(req: Request, res: Response): Actor {
  return actorOf(tenantOf(res), req.ip ?? null);
}

/** The caller of a membership change: role in the workspace, user, actor. */
export function caller(req: Request, res: Response): Caller {
  const tenant = tenantOf(res);
  return { role: tenant.role as Role, userId: tenant.userId ?? null, actor: actor(req, res) };
}
