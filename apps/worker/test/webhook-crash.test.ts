import { Webhook } from 'standardwebhooks';
import { dispatchEvents } from '@sdx/domain/testing';
import {
  eventually,
  spawnWorkerProcess,
  startTestStack,
  startWebhookReceiver,
  type TestStack,
  type WebhookReceiver,
  type WorkerProcess,
} from '@sdx/testing';

/**
 * No event is lost to a crash. A real worker process (extraction only: WEBHOOK_CONCURRENCY=0,
 * so nothing it completes can have been delivered yet) completes jobs and is killed with
 * SIGKILL; their events wait in the outbox, committed with the completions, and another worker
 * delivers them. And when the deliveries were made but their queue entries are gone (a process
 * died before queueing them, or Redis lost them), the sweep queues them again.
 */
let stack: TestStack;
let receiver: WebhookReceiver;
let spawned: WorkerProcess | null = null;

const ENV = { WEBHOOK_ALLOW_HTTP: '1', WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1' };

beforeAll(async () => {
  stack = await startTestStack({ env: ENV });
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  spawned?.kill();
  await receiver.close();
  await stack.close();
});

it('delivers the events of jobs completed by a worker killed with SIGKILL before it could deliver them', async () => {
  const ws = await stack.workspace({ credits: 1000 });
  const hook = await stack.api.post('/v1/webhooks', { headers: ws.auth, body: { url: receiver.url, events: ['job.completed'] } });
  spawned = spawnWorkerProcess(stack, { WEBHOOK_CONCURRENCY: '0', ...ENV });
  const child = spawned.proc;
  const exited = new Promise<unknown>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  const jobs = await Promise.all(
    ['crash_a', 'crash_b'].map((target) => stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'profile', target } })),
  );
  const ids = jobs.map((r) => r.body.id as string);
  await eventually(async () => {
    const rows = await stack.runtime.db.selectFrom('jobs').select('status').where('id', 'in', ids).execute();
    return rows.every((r) => r.status === 'completed');
  }, 60_000).catch((error) => {
    throw new Error(`${String(error)}\nworker output:\n${spawned!.output()}`);
  });
  process.kill(-child.pid!, 'SIGKILL');
  expect(await exited).toBe('SIGKILL');

  // Committed with the completions, not dispatched: nothing was sent.
  const outbox = await stack.runtime.db
    .selectFrom('webhook_events')
    .select(['subject_id', 'dispatched_at'])
    .where('workspace_id', '=', ws.workspaceId)
    .execute();
  expect(outbox.map((e) => e.subject_id).sort()).toEqual([...ids].sort());
  expect(outbox.every((e) => e.dispatched_at === null)).toBe(true);
  expect(receiver.messages).toHaveLength(0);

  const worker = stack.startWorker(1);
  const messages = await receiver.received(2);
  const events = messages.map((m) => new Webhook(hook.body.secret).verify(m.body, m.headers) as { type: string; data: { id: string } });
  expect(events.map((e) => e.data.id).sort()).toEqual([...ids].sort());
  expect(events.every((e) => e.type === 'job.completed')).toBe(true);
  await worker.close();
  stack.worker = null;
}, 90_000);

it('queues again the deliveries whose queue entries were lost', async () => {
  const ws = await stack.workspace({ credits: 1000 });
  const hook = await stack.api.post('/v1/webhooks', { headers: ws.auth, body: { url: receiver.url, events: ['webhook.test'] } });
  const before = receiver.messages.length;
  const test = await stack.api.post(`/v1/webhooks/${hook.body.id}/test`, { headers: ws.auth });
  // As if the process died between writing the delivery and queueing it: the entry is gone.
  await stack.runtime.queues.webhookDeliveries.obliterate({ force: true });
  expect(await dispatchEvents(stack.runtime.services)).toBe(0);
  const worker = stack.startWorker(1);
  const [message] = (await receiver.received(before + 1, 20_000)).slice(before);
  expect(new Webhook(hook.body.secret).verify(message.body, message.headers)).toMatchObject({
    type: 'webhook.test',
    id: test.body.event_id,
  });
  await eventually(async () => {
    const log = await stack.api.get(`/v1/webhooks/${hook.body.id}/deliveries`, { headers: ws.auth });
    return log.body[0]?.status === 'succeeded';
  });
  await worker.close();
  stack.worker = null;
}, 40_000);
