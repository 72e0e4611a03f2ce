import type { RequestHandler } from 'express';
import { renderApiKey, updateApiKey } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';

interface UpdateKeyBody {
  name?: string;
  monthly_credit_cap?: number | null;
}

/** PATCH /v1/keys/{key_id} — renames a key or sets its monthly spend cap; 200 with the key. A key may not change its own cap, nor a higher key's: 403. */
export const updateKey = ({ services }: AppDeps): RequestHandler => async (req, res) => {
  const body = req.body as UpdateKeyBody;
  const tenant = tenantOf(res);
  const key = await updateApiKey(
    services.db,
    tenant.workspace.id,
    String(req.params.key_id),
    { name: body.name, monthlyCreditCap: body.monthly_credit_cap },
    actor(req, res),
    services.clock.now(),
    { keyId: tenant.keyId, role: tenant.role },
  );
  res.json(renderApiKey(key));
};
