import type { ChildProcess } from 'node:child_process';
import { verifyWebhook } from '@sdx/sdk';
import { type ServedStack, startServedStack, startWebhookReceiver, type WebhookReceiver, type LooseJson } from '@sdx/testing';
import { sdx } from './support';

/** `sdx webhooks listen --forward-to`: a temporary endpoint whose deliveries reach a local handler, signed by the service. */

let served: ServedStack;
let handler: WebhookReceiver;
beforeAll(async () => {
  served = await startServedStack({
    withWorker: true,
    env: { WEBHOOK_ALLOW_HTTP: '1', WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1', WEBHOOK_RETRY_SCHEDULE: '0.2,0.2' },
  });
  handler = await startWebhookReceiver(() => ({ status: 204 }));
});
const listeners: ChildProcess[] = [];
afterAll(async () => {
  for (const child of listeners) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await handler.close();
  await served.close();
});

it('forwards the events signed, prints one JSON line each, and deletes the endpoint on Ctrl-C', async () => {
  const ws = await served.stack.workspace({ credits: 10_000 });
  const env = { SDX_BASE_URL: served.url, SDX_API_KEY: ws.apiKey, XDG_CONFIG_HOME: '/nonexistent' };
  const listening = sdx(['webhooks', 'listen', '--forward-to', handler.url, '--events', 'job.completed', '--json'], { env });
  // A failed expectation below must not leave the listener running past the test.
  listeners.push(listening.child);
  const next = jsonLines(listening.child.stdout!);

  const ready = await next();
  expect(ready).toMatchObject({
    ready: true,
    webhook_id: expect.stringMatching(/^whk_/),
    secret: expect.stringMatching(/^whsec_/),
    events: ['job.completed'],
  });
  const hooks = await served.stack.api.get('/v1/webhooks', { headers: ws.auth });
  expect(hooks.body.map((h: { id: string }) => h.id)).toEqual([ready.webhook_id]);

  const job = await served.stack.api.post('/v1/extract', {
    headers: ws.auth,
    body: { platform: 'instagram', operation: 'profile', target: 'natgeo' },
  });
  const [message] = await handler.received(1);
  expect((await verifyWebhook(message.body, message.headers, ready.secret)).data).toMatchObject({ id: job.body.id });
  expect(await next()).toMatchObject({ forwarded: true, type: 'job.completed', status: 204 });

  listening.child.kill('SIGINT');
  const ran = await listening;
  expect(ran.code).toBe(130);
  expect((await served.stack.api.get('/v1/webhooks', { headers: ws.auth })).body).toEqual([]);
});

/** The JSON lines of a stream, one per call, in order. */
function jsonLines(stream: NodeJS.ReadableStream): () => Promise<Record<string, LooseJson>> {
  let buffer = '';
  const queue: Array<Record<string, LooseJson>> = [];
  const waiters: Array<(line: Record<string, LooseJson>) => void> = [];
  stream.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
      const line = buffer.slice(0, at).trim();
      buffer = buffer.slice(at + 1);
      if (line === '') continue;
      const value = JSON.parse(line) as Record<string, LooseJson>;
      const waiter = waiters.shift();
      if (waiter) waiter(value);
      else queue.push(value);
    }
  });
  return () => (queue.length > 0 ? Promise.resolve(queue.shift()!) : new Promise((resolve) => waiters.push(resolve)));
}
