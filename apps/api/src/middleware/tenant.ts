import type { Response } from 'express';
import type { Tenant } from '@sdx/domain/api';

/** The tenant resolved by the auth middleware for this request. */
export function tenantOf(res: Response): Tenant {
  const tenant = res.locals.tenant as Tenant | undefined;
  if (!tenant) throw new Error('route reached without authentication');
  return tenant;
}
