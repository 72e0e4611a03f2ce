import { renderApiKey, updateApiKey } from '@sdx/domain/api';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** PATCH /v1/keys/{key_id} — renames a key or sets its monthly spend cap; 200 with the key. A key may not change its own cap, nor a higher key's: 403. */
export const updateKey = route('updateKey', {
  access: 'admin',
  handler: async ({ deps: { services }, req, res }, body) => {
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
  },
});
