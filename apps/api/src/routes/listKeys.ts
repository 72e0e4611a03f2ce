import { listApiKeys, renderApiKey } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** GET /v1/keys — newest first, revoked ones included, never a secret. */
export const listKeys = route('listKeys', {
  access: 'viewer',
  handler: async ({ deps: { services }, res }) => {
    res.json((await listApiKeys(services.db, tenantOf(res).workspace.id, services.clock.now())).map((key) => renderApiKey(key)));
  },
});
