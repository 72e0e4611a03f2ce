import { createApiKey, RequestValidationError, renderApiKey } from '@sdx/domain/api';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** POST /v1/keys — 201 with the secret, shown in this response only. */
export const createKey = route('createKey', {
  access: 'admin',
  handler: async ({ deps: { services }, req, res }, body) => {
    const tenant = tenantOf(res);
    const expiresAt = body.expires_at ? new Date(body.expires_at) : null;
    if (expiresAt && expiresAt.getTime() <= services.clock.now().getTime()) {
      throw new RequestValidationError([
        { loc: ['body', 'expires_at'], msg: 'Value should be in the future', type: 'value_error', input: body.expires_at },
      ]);
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
  },
});
