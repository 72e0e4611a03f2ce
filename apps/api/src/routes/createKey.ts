import type { RequestHandler } from 'express';
import { createApiKey, RequestValidationError, renderApiKey, type Role } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';

interface CreateKeyBody {
  name: string;
  role?: Role;
  expires_at?: string | null;
  monthly_credit_cap?: number | null;
}

/** POST /v1/keys — 201 with the secret, shown in this response only. */
export const createKey = ({ services }: AppDeps): RequestHandler => async (req, res) => {
  const body = req.body as CreateKeyBody;
  const tenant = tenantOf(res);
  const expiresAt = body.expires_at ? new Date(body.expires_at) : null;
  if (expiresAt && expiresAt.getTime() <= services.clock.now().getTime()) {
    throw new RequestValidationError([{ loc: ['body', 'expires_at'], msg: 'Value should be in the future', type: 'value_error', input: body.expires_at }]);
  }
  const created = await createApiKey(services.db, tenant.workspace.id, body.name, {
    role: body.role ?? 'member',
    expiresAt,
    createdBy: tenant.userId ?? tenant.keyId,
    grantorRole: tenant.role,
    monthlyCreditCap: body.monthly_credit_cap ?? null,
    actor: actor(req, res),
  });
  res.status(201).json({ ...renderApiKey(created.key), api_key: created.api_key });
};
