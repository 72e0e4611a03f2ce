import type { RouteDef } from '../app';
import { createWebhook } from './createWebhook';
import { deleteWebhook } from './deleteWebhook';
import { getWebhook } from './getWebhook';
import { listWebhookDeliveries } from './listWebhookDeliveries';
import { listWebhooks } from './listWebhooks';
import { redeliverWebhookDelivery } from './redeliverWebhookDelivery';
import { rotateWebhookSecret } from './rotateWebhookSecret';
import { streamBatchEvents } from './streamBatchEvents';
import { streamJobEvents } from './streamJobEvents';
import { testWebhook } from './testWebhook';
import { updateWebhook } from './updateWebhook';

/** Routes of webhooks and live progress (extensions.md 5 and 6). */
export const webhookRoutes: RouteDef[] = [
  { method: 'post', path: '/v1/webhooks', handler: createWebhook },
  { method: 'get', path: '/v1/webhooks', handler: listWebhooks },
  { method: 'get', path: '/v1/webhooks/:webhook_id', handler: getWebhook },
  { method: 'patch', path: '/v1/webhooks/:webhook_id', handler: updateWebhook },
  { method: 'delete', path: '/v1/webhooks/:webhook_id', handler: deleteWebhook },
  { method: 'post', path: '/v1/webhooks/:webhook_id/rotate-secret', handler: rotateWebhookSecret },
  { method: 'post', path: '/v1/webhooks/:webhook_id/test', handler: testWebhook },
  { method: 'get', path: '/v1/webhooks/:webhook_id/deliveries', handler: listWebhookDeliveries },
  { method: 'post', path: '/v1/webhooks/:webhook_id/deliveries/:delivery_id/redeliver', handler: redeliverWebhookDelivery },
  { method: 'get', path: '/v1/jobs/:job_id/events', handler: streamJobEvents },
  { method: 'get', path: '/v1/batches/:batch_id/events', handler: streamBatchEvents },
];
