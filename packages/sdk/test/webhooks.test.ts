import { type Client, WebhookVerificationError } from '@sdx/sdk';
import {
  eventually,
  type SeededWorkspace,
  type ServedStack,
  startServedStack,
  startWebhookReceiver,
  type WebhookReceiver,
} from '@sdx/testing';
import { clientFor } from './support';

/** The webhook endpoints through the SDK, and webhooks.verify on what the service really sends. */

let served: ServedStack;
let inbox: WebhookReceiver;
beforeAll(async () => {
  served = await startServedStack({
    withWorker: true,
    env: { WEBHOOK_ALLOW_HTTP: '1', WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1', WEBHOOK_RETRY_SCHEDULE: '0.2,0.2' },
  });
  inbox = await startWebhookReceiver();
});
afterAll(async () => {
  await inbox.close();
  await served.close();
});

let ws: SeededWorkspace;
let sdx: Client;
beforeEach(async () => {
  ws = await served.stack.workspace({ credits: 10_000 });
  sdx = clientFor(served.url, ws);
});

it('manages an endpoint and verifies the deliveries the service signs', async () => {
  const hook = await sdx.webhooks.create({ url: inbox.url, events: ['job.completed'], description: 'sdk test' });
  expect(hook.secret).toMatch(/^whsec_/);
  expect((await sdx.webhooks.list()).data.map((h) => h.id)).toEqual([hook.id]);
  expect((await sdx.webhooks.get(hook.id)).url).toBe(inbox.url);
  expect((await sdx.webhooks.update(hook.id, { description: 'renamed' })).description).toBe('renamed');

  const delivery = await sdx.webhooks.test(hook.id);
  expect(delivery).toMatchObject({ event_type: 'webhook.test', status: 'pending' });
  const [message] = await inbox.received(1);
  const event = await sdx.webhooks.verify(message.body, message.headers, hook.secret);
  expect(event).toMatchObject({ type: 'webhook.test', workspace_id: ws.workspaceId });
  await expect(sdx.webhooks.verify(`${message.body} `, message.headers, hook.secret)).rejects.toBeInstanceOf(WebhookVerificationError);

  const job = await sdx.jobs.extract({ platform: 'instagram', operation: 'profile', target: 'natgeo' });
  const messages = await inbox.received(2);
  const completed = await sdx.webhooks.verify(messages[1].body, messages[1].headers, hook.secret);
  expect(completed).toMatchObject({ type: 'job.completed', data: { id: job.id } });

  const logged = await eventually(async () => {
    const list = (await sdx.webhooks.deliveries(hook.id).toArray()).filter((d) => d.status === 'succeeded');
    return list.length === 2 ? list : undefined;
  });
  const again = await sdx.webhooks.redeliver(hook.id, logged[1].id);
  expect(again).toMatchObject({ event_id: logged[1].event_id, status: 'pending' });
  const [, , redelivered] = await inbox.received(3);
  expect(redelivered.headers['webhook-id']).toBe(messages[0].headers['webhook-id']);

  const rotated = await sdx.webhooks.rotateSecret(hook.id);
  expect(rotated.secret).not.toBe(hook.secret);
  await sdx.webhooks.test(hook.id);
  const [, , , fourth] = await inbox.received(4);
  expect((await sdx.webhooks.verify(fourth.body, fourth.headers, rotated.secret)).type).toBe('webhook.test');
  expect((await sdx.webhooks.verify(fourth.body, fourth.headers, hook.secret)).type).toBe('webhook.test');

  await sdx.webhooks.delete(hook.id);
  await expect(sdx.webhooks.get(hook.id)).rejects.toMatchObject({ status: 404 });
});
