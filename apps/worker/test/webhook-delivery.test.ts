import { Webhook } from 'standardwebhooks';
import {
  eventually,
  schemaProblems,
  startTestStack,
  startWebhookReceiver,
  type SeededWorkspace,
  type TestStack,
  type WebhookReceiver,
  type LooseJson,
} from '@sdx/testing';

/**
 * Webhook delivery end to end, with real receivers on loopback and the service's own worker:
 * every event type arrives signed, and the `standardwebhooks` package (the scheme's verifier,
 * not the project's code) verifies the bytes each receiver got; failed attempts are retried on
 * WEBHOOK_RETRY_SCHEDULE with the same webhook-id; a hanging receiver is cut off at 10 s and
 * delays no other receiver; a rotation signs with both secrets.
 */
let stack: TestStack;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  stack = await startTestStack({
    withWorker: true,
    env: { WEBHOOK_ALLOW_HTTP: '1', WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1', WEBHOOK_RETRY_SCHEDULE: '0.2,0.2,0.2' },
  });
});
afterAll(async () => {
  for (const receiver of receivers) await receiver.close();
  await stack.close();
});

async function receiver(answer?: Parameters<typeof startWebhookReceiver>[0]): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver(answer);
  receivers.push(r);
  return r;
}

async function register(ws: SeededWorkspace, url: string, events: string[] = ['*']): Promise<{ id: string; secret: string }> {
  const res = await stack.api.post('/v1/webhooks', { headers: ws.auth, body: { url, events } });
  expect(res.status).toBe(201);
  return res.body as { id: string; secret: string };
}

const SCHEMA_OF: Record<string, string> = {
  job: 'JobWebhookEvent',
  batch: 'BatchWebhookEvent',
  schedule: 'ScheduleRunWebhookEvent',
  webhook: 'TestWebhookEvent',
};

/** The message verified by the Standard Webhooks library, and its body checked against openapi.yaml. */
function verified(secret: string, message: { body: string; headers: Record<string, string> }) {
  const event = new Webhook(secret).verify(message.body, message.headers) as { id: string; type: string; data: Record<string, LooseJson> };
  expect(message.headers['webhook-id']).toBe(event.id);
  expect(schemaProblems(SCHEMA_OF[event.type.split('.')[0]], event)).toEqual([]);
  return event;
}

async function deliveries(ws: SeededWorkspace, webhookId: string) {
  const res = await stack.api.get(`/v1/webhooks/${webhookId}/deliveries`, { headers: ws.auth });
  expect(res.status).toBe(200);
  return res.body as Array<Record<string, LooseJson>>;
}

it('delivers every event type, signed and verifiable by the standardwebhooks library', async () => {
  const ws = await stack.workspace({ credits: 100_000, maxActiveJobs: 100 });
  const inbox = await receiver();
  const hook = await register(ws, inbox.url);
  const post = (path: string, body?: unknown) => stack.api.post(path, { headers: ws.auth, body });

  const completed = await post('/v1/jobs', { operation: 'profile', target: 'webhook_done' });
  const failed = await post('/v1/jobs', { operation: 'profile', target: 'webhook_sandbox_not_found' });
  const slow = await post('/v1/jobs', { operation: 'posts', target: 'webhook_sandbox_slow_20000', limit: 200 });
  const batchDone = await post('/v1/batches', { operation: 'profile', targets: ['bw_1', 'bw_2'] });
  const batchFailed = await post('/v1/batches', { operation: 'profile', targets: ['bw_sandbox_not_found', 'bw_sandbox_private'] });
  const batchSlow = await post('/v1/batches', {
    operation: 'posts',
    limit: 200,
    targets: ['bw_sandbox_slow_20000', 'bw2_sandbox_slow_20000'],
  });
  const schedule = await post('/v1/schedules', {
    name: 'webhooks',
    operation: 'posts',
    limit: 200,
    targets: ['sw_sandbox_slow_20000'],
    frequency: 'daily',
    timezone: 'UTC',
    starts_at: new Date(Date.now() + 86_400_000).toISOString(),
  });
  expect((await post(`/v1/schedules/${schedule.body.id}/run`)).status).toBe(202);
  // The first occurrence's job is still running: the second is skipped (overlap).
  expect((await post(`/v1/schedules/${schedule.body.id}/run`)).status).toBe(202);
  expect((await post(`/v1/jobs/${slow.body.id}/cancel`)).status).toBe(200);
  expect((await post(`/v1/batches/${batchSlow.body.id}/cancel`)).status).toBe(200);
  const test = await post(`/v1/webhooks/${hook.id}/test`);
  expect(test.status).toBe(202);
  expect(test.body).toMatchObject({ event_type: 'webhook.test', status: 'pending', attempts: 0 });

  const expected: Record<string, string> = {
    'job.completed': completed.body.id,
    'job.failed': failed.body.id,
    'job.cancelled': slow.body.id,
    'batch.completed': batchDone.body.id,
    'batch.failed': batchFailed.body.id,
    'batch.cancelled': batchSlow.body.id,
    'schedule.run.dispatched': schedule.body.id,
    'schedule.run.skipped': schedule.body.id,
    'webhook.test': hook.id,
  };
  const seen = new Map<string, Record<string, LooseJson>>();
  await eventually(() => {
    for (const message of inbox.messages) {
      const event = verified(hook.secret, message);
      const subject = event.data.schedule_id ?? event.data.webhook_id ?? event.data.id;
      if (Object.values(expected).includes(subject)) seen.set(`${event.type}:${subject}`, event);
    }
    return Object.entries(expected).every(([type, id]) => seen.has(`${type}:${id}`));
  }, 30_000);

  const job = seen.get(`job.completed:${completed.body.id}`)!;
  expect(job).toMatchObject({ type: 'job.completed', workspace_id: ws.workspaceId });
  expect(job.data).toMatchObject({ id: completed.body.id, status: 'completed', result: null, result_count: 1 });
  expect(job.id).toMatch(/^evt_/);
  expect(seen.get(`job.failed:${failed.body.id}`)!.data.error).toMatchObject({ code: 'target_not_found' });
  const batch = seen.get(`batch.completed:${batchDone.body.id}`)!;
  expect(batch.data).toMatchObject({ status: 'completed', completed_count: 2 });
  expect(batch.data.jobs).toBeUndefined();
  expect(seen.get(`batch.cancelled:${batchSlow.body.id}`)!.data).toMatchObject({ status: 'cancelled', cancelled_count: 2 });
  expect(seen.get(`schedule.run.skipped:${schedule.body.id}`)!.data).toMatchObject({ status: 'skipped_overlap', job_id: null });
  expect(seen.get(`schedule.run.dispatched:${schedule.body.id}`)!.data.job_id).toMatch(/^job_/);
  // Each batch's event comes once, whichever of its children ended last.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const batchEvents = inbox.messages.map((m) => JSON.parse(m.body)).filter((e) => e.type.startsWith('batch.'));
  expect(batchEvents.map((e) => e.data.id).sort()).toEqual([batchDone.body.id, batchFailed.body.id, batchSlow.body.id].sort());

  const log = await deliveries(ws, hook.id);
  expect(log.every((d) => d.status === 'succeeded' && d.attempts === 1 && d.response_status === 204 && d.delivered_at !== null)).toBe(true);
  expect(log.map((d) => d.id)).toEqual([...log.map((d) => d.id)].sort().reverse());
});

it('sends only the events a webhook takes, and nothing to a workspace without webhooks', async () => {
  const ws = await stack.workspace({ credits: 1000 });
  const quiet = await stack.workspace({ credits: 1000 });
  const inbox = await receiver();
  const hook = await register(ws, inbox.url, ['job.failed']);
  const done = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'profile', target: 'only_done' } });
  const failed = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'profile', target: 'only_sandbox_private' } });
  const other = await stack.api.post('/v1/jobs', { headers: quiet.auth, body: { operation: 'profile', target: 'quiet_sandbox_private' } });
  const [message] = await inbox.received(1);
  expect(verified(hook.secret, message)).toMatchObject({ type: 'job.failed', data: { id: failed.body.id } });
  await eventually(async () => {
    const jobs = await Promise.all(
      [done, other].map((r) => stack.runtime.db.selectFrom('jobs').select('status').where('id', '=', r.body.id).executeTakeFirstOrThrow()),
    );
    return jobs.every((j) => j.status !== 'queued' && j.status !== 'running');
  });
  const outbox = await stack.runtime.db
    .selectFrom('webhook_events')
    .select(['subject_id'])
    .where('workspace_id', 'in', [ws.workspaceId, quiet.workspaceId])
    .execute();
  expect(outbox.map((e) => e.subject_id)).toEqual([failed.body.id]);
  expect(inbox.messages).toHaveLength(1);
});

it('retries a receiver answering 500, 500, 200: three attempts of the same message, the same webhook-id', async () => {
  const ws = await stack.workspace({ credits: 1000 });
  const inbox = await receiver((n) => ({ status: n < 2 ? 500 : 200 }));
  const hook = await register(ws, inbox.url, ['job.completed']);
  const job = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'profile', target: 'retry_me' } });
  const messages = await inbox.received(3);
  const ids = messages.map((m) => verified(hook.secret, m).id);
  expect(new Set(ids).size).toBe(1);
  expect(messages.map((m) => m.body)).toEqual([messages[0].body, messages[0].body, messages[0].body]);
  expect(JSON.parse(messages[0].body).data.id).toBe(job.body.id);
  const [delivery] = await eventually(async () => {
    const log = await deliveries(ws, hook.id);
    return log[0]?.status === 'succeeded' ? log : undefined;
  });
  expect(delivery).toMatchObject({ event_id: ids[0], attempts: 3, response_status: 200, error: null, next_attempt_at: null });
});

it('fails a delivery once the retry schedule is spent, and redelivers it on request with the same webhook-id', async () => {
  const ws = await stack.workspace({ credits: 1000 });
  let healthy = false;
  const inbox = await receiver(() => ({ status: healthy ? 200 : 503 }));
  const hook = await register(ws, inbox.url, ['job.completed']);
  await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'profile', target: 'spent' } });
  const [failed] = await eventually(async () => {
    const log = await deliveries(ws, hook.id);
    return log[0]?.status === 'failed' ? log : undefined;
  });
  // One attempt, then one per entry of the schedule (three).
  expect(failed).toMatchObject({ attempts: 4, response_status: 503, error: 'HTTP 503', next_attempt_at: null, delivered_at: null });
  expect(inbox.messages).toHaveLength(4);

  healthy = true;
  const again = await stack.api.post(`/v1/webhooks/${hook.id}/deliveries/${failed.id}/redeliver`, { headers: ws.auth });
  expect(again.status).toBe(202);
  expect(again.body).toMatchObject({ event_id: failed.event_id, status: 'pending', attempts: 0 });
  const messages = await inbox.received(5);
  expect(verified(hook.secret, messages[4]).id).toBe(failed.event_id);
  await eventually(async () => (await deliveries(ws, hook.id))[0]?.status === 'succeeded');
});

it('cuts off a receiver that hangs at 10 s and retries it, without delaying another receiver', async () => {
  const ws = await stack.workspace({ credits: 1000 });
  const other = await stack.workspace({ credits: 1000 });
  const hanging = await receiver((n) => (n === 0 ? 'hang' : { status: 200 }));
  const fast = await receiver();
  const slowHook = await register(ws, hanging.url, ['job.completed']);
  const fastHook = await register(other, fast.url, ['job.completed']);
  await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'profile', target: 'hang_on' } });
  const [held] = await hanging.received(1);

  // While the first receiver holds its request open, the other's messages go through.
  for (let i = 0; i < 3; i++)
    await stack.api.post('/v1/jobs', { headers: other.auth, body: { operation: 'profile', target: `fast_${i}` } });
  const fastMessages = await fast.received(3);
  for (const message of fastMessages) verified(fastHook.secret, message);
  expect(held.abortedAt).toBeNull();

  const [, retried] = await hanging.received(2, 20_000);
  expect(held.abortedAt).not.toBeNull();
  // The sender gave up on its own (the receiver never answered), no sooner than its timeout.
  expect(held.abortedAt! - held.at).toBeGreaterThanOrEqual(9_500);
  expect(verified(slowHook.secret, retried).id).toBe(held.headers['webhook-id']);
  const [delivery] = await eventually(async () => {
    const log = await deliveries(ws, slowHook.id);
    return log[0]?.status === 'succeeded' ? log : undefined;
  });
  expect(delivery.attempts).toBe(2);
}, 40_000);

it('signs with both secrets for 24 hours after a rotation', async () => {
  const ws = await stack.workspace({ credits: 1000 });
  const inbox = await receiver();
  const hook = await register(ws, inbox.url, ['webhook.test']);
  const rotated = await stack.api.post(`/v1/webhooks/${hook.id}/rotate-secret`, { headers: ws.auth });
  expect(rotated.status).toBe(200);
  expect(rotated.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  expect(rotated.body.secret).not.toBe(hook.secret);
  await stack.api.post(`/v1/webhooks/${hook.id}/test`, { headers: ws.auth });
  const [message] = await inbox.received(1);
  const signatures = message.headers['webhook-signature'].split(' ');
  expect(signatures).toHaveLength(2);
  // Either secret verifies the message on its own.
  expect(verified(rotated.body.secret, message).type).toBe('webhook.test');
  expect(verified(hook.secret, message).type).toBe('webhook.test');
  expect(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(message.body, message.headers)).toThrow(
    /No matching signature/,
  );

  // Past the 24 hours, only the new secret signs.
  await stack.runtime.db
    .updateTable('webhooks')
    .set({ previous_secret_expires_at: new Date(Date.now() - 1000) })
    .where('id', '=', hook.id)
    .execute();
  await stack.api.post(`/v1/webhooks/${hook.id}/test`, { headers: ws.auth });
  const [, later] = await inbox.received(2);
  expect(later.headers['webhook-signature'].split(' ')).toHaveLength(1);
  verified(rotated.body.secret, later);
  expect(() => new Webhook(hook.secret).verify(later.body, later.headers)).toThrow(/No matching signature/);
});

it('stops a disabled webhook: no new deliveries, test sends still go', async () => {
  const ws = await stack.workspace({ credits: 1000 });
  const inbox = await receiver();
  const hook = await register(ws, inbox.url);
  expect((await stack.api.patch(`/v1/webhooks/${hook.id}`, { headers: ws.auth, body: { enabled: false } })).body.enabled).toBe(false);
  const job = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'profile', target: 'disabled_hook' } });
  await eventually(async () => (await stack.api.get(`/v1/jobs/${job.body.id}`, { headers: ws.auth })).body.status === 'completed');
  await stack.api.post(`/v1/webhooks/${hook.id}/test`, { headers: ws.auth });
  const [message] = await inbox.received(1);
  expect(verified(hook.secret, message).type).toBe('webhook.test');
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(inbox.messages).toHaveLength(1);
});
