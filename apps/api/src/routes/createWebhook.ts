import { createWebhook as create, renderWebhook } from '@sdx/domain/api';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** POST /v1/webhooks — 201 with the signing secret, shown in this response only. */
export const createWebhook = route('createWebhook', {
  access: 'admin',
  handler: async ({ deps: { services }, req, res }, body) => {
    const { webhook, secret } = await create(services, tenantOf(res), body, actor(req, res));
    res.status(201).json({ ...renderWebhook(webhook), secret });
  },
});
