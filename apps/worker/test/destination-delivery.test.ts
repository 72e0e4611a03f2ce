import { connect, createServer, type Server, type Socket } from 'node:net';
import { ObjectStore } from '@sdx/storage';
import {
  eventually,
  listen,
  type LoopbackS3,
  startLoopbackS3,
  startTestStack,
  type SeededWorkspace,
  type TestStack,
  waitForJob,
} from '@sdx/testing';

/**
 * Delivery to a destination end to end (extensions-2.md 5), with a real worker and a loopback
 * S3: a job's export lands at `{prefix}{job_id}.{ext}` with the bytes GET
 * /v1/jobs/{id}/export?format= answers, a batch's at `{prefix}{batch_id}.{ext}`; a store that
 * does not answer is retried on the webhook schedule (WEBHOOK_RETRY_SCHEDULE=1,1 here) until it
 * answers, and a delivery whose every attempt failed ends failed, each with its event in the
 * outbox. Between the service and the store for the outage cases: a TCP relay the test closes
 * and reopens on the same port (a network fault, the only thing faked).
 */
let s3: LoopbackS3;
let stack: TestStack;
let ws: SeededWorkspace;
let store: ObjectStore;

/** A TCP relay to the loopback S3 that can be taken down and brought back on its port. */
class Relay {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  port = 0;

  async up(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(s3.port, '127.0.0.1');
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  async down(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = null;
  }
}

beforeAll(async () => {
  s3 = await startLoopbackS3(['deliveries']);
  stack = await startTestStack({
    withWorker: true,
    env: { WEBHOOK_ALLOW_HTTP: '1', WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1', WEBHOOK_RETRY_SCHEDULE: '1,1' },
  });
  ws = await stack.workspace({ credits: 10_000 });
  store = ObjectStore.of({
    bucket: 'deliveries',
    region: s3.region,
    endpoint: s3.endpoint,
    forcePathStyle: true,
    accessKeyId: s3.accessKeyId,
    secretAccessKey: s3.secretAccessKey,
  });
  // A webhook that takes the delivery events, so they are written to the outbox (its own deliveries go nowhere).
  const hook = await stack.api.post('/v1/webhooks', {
    headers: ws.auth,
    body: { url: 'http://127.0.0.1:9/', events: ['job.delivered', 'job.delivery_failed', 'batch.delivered', 'batch.delivery_failed'] },
  });
  expect(hook.status).toBe(201);
});
afterAll(async () => {
  store.close();
  await stack.close();
  await s3.stop();
});

async function destination(extra: Record<string, unknown>, endpoint = s3.endpoint): Promise<string> {
  const res = await stack.api.post('/v1/destinations', {
    headers: ws.auth,
    body: {
      name: 'bucket',
      type: 's3',
      bucket: 'deliveries',
      endpoint,
      force_path_style: true,
      access_key_id: s3.accessKeyId,
      secret_access_key: s3.secretAccessKey,
      ...extra,
    },
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

const events = (subjectId: string) =>
  stack.runtime.db
    .selectFrom('webhook_events')
    .select('type')
    .where('subject_id', '=', subjectId)
    .where('type', 'like', '%deliver%')
    .execute()
    .then((rows) => rows.map((r) => r.type));

/** The exact bytes of a download, as a client receives them. */
async function download(path: string): Promise<Buffer> {
  const served = await listen(stack.app);
  try {
    const res = await fetch(`${served.url}${path}`, { headers: ws.auth });
    expect(res.status).toBe(200);
    return Buffer.from(await res.arrayBuffer());
  } finally {
    served.server.closeAllConnections();
    await new Promise((resolve) => served.server.close(resolve));
  }
}

it('writes a completed job’s export to {prefix}{job_id}.ndjson with the bytes of its export download, and tells job.delivered', async () => {
  const dest = await destination({ prefix: 'jobs/' });
  const created = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'twitter', operation: 'followers', target: 'nasa', limit: 40, destination_id: dest },
  });
  expect(created.status).toBe(202);
  const job = await waitForJob(stack, ws.auth, created.body.id, (j) => j.delivery?.status === 'succeeded', 30_000);
  expect(job.delivery).toEqual({
    destination_id: dest,
    status: 'succeeded',
    key: `jobs/${job.id}.ndjson`,
    attempts: 1,
    error: null,
    delivered_at: expect.any(String),
  });
  const object = await store.getBytes(`jobs/${job.id}.ndjson`);
  expect(object.length).toBeGreaterThan(0);
  expect(object.equals(await download(`/v1/jobs/${job.id}/export?format=ndjson`))).toBe(true);
  await eventually(async () => (await events(job.id)).includes('job.delivered'));
  expect(await events(job.id)).toEqual(['job.delivered']);
  // Delivery costs nothing: the job's ledger holds its reservation and settlement alone.
  const ledger = await stack.runtime.db.selectFrom('credit_ledger').select('entry_type').where('job_id', '=', job.id).execute();
  expect(ledger.map((l) => l.entry_type).sort()).toEqual(['reserve', 'settle']);
});

it('writes a json job and a csv batch (when it ends) with the bytes of their downloads', async () => {
  const json = await destination({ format: 'json' });
  const csv = await destination({ format: 'csv', prefix: 'batches/' });
  const job = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { operation: 'profile', target: 'natgeo', include_posts: 3, destination_id: json },
  });
  const batch = await stack.api.post('/v1/batches', {
    headers: ws.auth,
    body: { operation: 'posts', targets: ['natgeo', 'nasa', 'esa'], limit: 5, destination_id: csv },
  });
  expect(batch.status).toBe(202);
  const doneJob = await waitForJob(stack, ws.auth, job.body.id, (j) => j.delivery?.status === 'succeeded', 30_000);
  expect((await store.getBytes(`${doneJob.id}.json`)).equals(await download(`/v1/jobs/${doneJob.id}/export?format=json`))).toBe(true);
  const doneBatch = await eventually(async () => {
    const res = await stack.api.get(`/v1/batches/${batch.body.id}`, { headers: ws.auth });
    return res.body.delivery?.status === 'succeeded' ? res.body : undefined;
  }, 30_000);
  expect(doneBatch.status).toBe('completed');
  expect(doneBatch.delivery.key).toBe(`batches/${batch.body.id}.csv`);
  const object = await store.getBytes(`batches/${batch.body.id}.csv`);
  expect(object.equals(await download(`/v1/batches/${batch.body.id}/export?format=csv`))).toBe(true);
  expect(object.toString('utf8').split('\r\n')[0]).toMatch(/^"?batch_id"?,"?job_id"?,"?target"?/);
  await eventually(async () => (await events(batch.body.id)).includes('batch.delivered'));
  // The children are not delivered one by one.
  const children = await stack.runtime.db.selectFrom('jobs').select('delivery_status').where('batch_id', '=', batch.body.id).execute();
  expect(children.every((c) => c.delivery_status === null)).toBe(true);
});

it('retries while the store does not answer, on the webhook schedule, then delivers', async () => {
  const relay = new Relay();
  await relay.up();
  const dest = await destination({}, `http://127.0.0.1:${relay.port}`);
  await relay.down();
  const created = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { operation: 'profile', target: 'retried', destination_id: dest },
  });
  const failedOnce = await waitForJob(
    stack,
    ws.auth,
    created.body.id,
    (j) => j.delivery?.attempts >= 1 && j.delivery?.error !== null,
    30_000,
  );
  expect(failedOnce.delivery.status).toBe('pending');
  expect(failedOnce.delivery.error).toMatch(/ECONNREFUSED/);
  await relay.up();
  const job = await waitForJob(stack, ws.auth, created.body.id, (j) => j.delivery?.status === 'succeeded', 30_000);
  expect(job.delivery.attempts).toBeGreaterThanOrEqual(2);
  expect(job.delivery.error).toBeNull();
  expect((await store.getBytes(`${job.id}.ndjson`)).equals(await download(`/v1/jobs/${job.id}/export?format=ndjson`))).toBe(true);
  await eventually(async () => (await events(job.id)).includes('job.delivered'));
  await relay.down();
});

it('fails after the schedule’s last attempt and tells job.delivery_failed; a failed job delivers nothing', async () => {
  const relay = new Relay();
  await relay.up();
  const dest = await destination({}, `http://127.0.0.1:${relay.port}`);
  await relay.down();
  const created = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { operation: 'profile', target: 'never', destination_id: dest },
  });
  const job = await waitForJob(stack, ws.auth, created.body.id, (j) => j.delivery?.status === 'failed', 30_000);
  // WEBHOOK_RETRY_SCHEDULE=1,1: the first attempt and two retries.
  expect(job.delivery.attempts).toBe(3);
  expect(job.delivery.error).toMatch(/ECONNREFUSED/);
  expect(job.delivery.delivered_at).toBeNull();
  await eventually(async () => (await events(job.id)).includes('job.delivery_failed'));
  expect(await events(job.id)).toEqual(['job.delivery_failed']);

  // A job that fails has no export: its delivery fails without an attempt (job.failed told its end).
  const failing = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { operation: 'profile', target: 'sandbox_not_found', destination_id: dest },
  });
  const ended = await waitForJob(stack, ws.auth, failing.body.id, (j) => j.delivery?.status === 'failed', 30_000);
  expect(ended.status).toBe('failed');
  expect(ended.delivery).toMatchObject({ attempts: 0, error: 'The job failed: it has no export to deliver.' });
});
