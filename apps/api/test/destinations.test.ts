import { execFile } from 'node:child_process';
import type { LookupAddress } from 'node:dns';
import { promisify } from 'node:util';
import { createApiKey, sealerOf } from '@sdx/domain/testing';
import { ObjectStore } from '@sdx/storage';
import { type LoopbackS3, startLoopbackS3, startTestStack, type SeededWorkspace, type TestStack } from '@sdx/testing';

/**
 * Destinations over HTTP (extensions-2.md 5): creation after a check write (the check object
 * written and deleted), listing, reading and deletion without the secret, 422
 * destination_unreachable with the store's message (a wrong key, a missing bucket, no answer),
 * the webhook URL rules on a custom endpoint, 404 destination_not_found on every path that
 * names one (jobs, batches, schedules), the roles, and the secret sealed at rest. The bucket is
 * a loopback S3 (s3rver); every response is checked against openapi.yaml.
 */
const run = promisify(execFile);
let s3: LoopbackS3;
let stack: TestStack;
let ws: SeededWorkspace;

beforeAll(async () => {
  s3 = await startLoopbackS3(['results']);
  // The loopback S3 is an http endpoint on a loopback address: the development settings allow it.
  stack = await startTestStack({ env: { WEBHOOK_ALLOW_HTTP: '1', WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1' } });
  ws = await stack.workspace({ credits: 1000 });
});
afterAll(async () => {
  await stack.close();
  await s3.stop();
});

const body = (extra: Record<string, unknown> = {}) => ({
  name: 'Results bucket',
  type: 's3',
  bucket: 'results',
  prefix: 'sdx/',
  endpoint: s3.endpoint,
  force_path_style: true,
  access_key_id: s3.accessKeyId,
  secret_access_key: s3.secretAccessKey,
  ...extra,
});
const create = (extra: Record<string, unknown> = {}, auth: Record<string, string> = ws.auth) =>
  stack.api.post('/v1/destinations', { headers: auth, body: body(extra) });

describe('POST /v1/destinations', () => {
  it('checks the bucket (the check object is gone after), stores the destination and never answers its secret', async () => {
    const res = await create();
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^dst_/),
      name: 'Results bucket',
      type: 's3',
      bucket: 'results',
      prefix: 'sdx/',
      region: 'us-east-1',
      endpoint: s3.endpoint,
      force_path_style: true,
      access_key_id: 'S3RVER',
      format: 'ndjson',
      created_at: expect.any(String),
    });
    expect(JSON.stringify(res.body)).not.toContain('secret');
    // No check object is left behind in the bucket.
    const store = ObjectStore.of({
      bucket: 'results',
      region: s3.region,
      endpoint: s3.endpoint,
      forcePathStyle: true,
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
    });
    const keys: string[] = [];
    for await (const page of store.list('sdx/')) keys.push(...page.map((o) => o.key));
    store.close();
    expect(keys).toEqual([]);

    const listed = await stack.api.get('/v1/destinations', { headers: ws.auth });
    expect(listed.status).toBe(200);
    expect(listed.body.map((d: { id: string }) => d.id)).toContain(res.body.id);
    const one = await stack.api.get(`/v1/destinations/${res.body.id}`, { headers: ws.auth });
    expect(one.status).toBe(200);
    expect(one.body).toEqual(res.body);

    const audit = await stack.runtime.db
      .selectFrom('audit_events')
      .select(['action', 'target_id'])
      .where('workspace_id', '=', ws.workspaceId)
      .where('action', '=', 'destination.created')
      .execute();
    expect(audit).toEqual([{ action: 'destination.created', target_id: res.body.id }]);
  });

  it('answers 422 destination_unreachable with the store message: a wrong key, a missing bucket, a store that does not answer', async () => {
    const wrongKey = await create({ access_key_id: 'NOT-A-KEY', name: 'wrong key' });
    expect(wrongKey.status).toBe(422);
    expect(wrongKey.body.detail).toMatchObject({ error: 'destination_unreachable', bucket: 'results', endpoint: s3.endpoint });
    expect(wrongKey.body.detail.message).toMatch(/^The destination could not be written to: .*Access Key/i);

    const missing = await create({ bucket: 'no-such-bucket', name: 'missing' });
    expect(missing.status).toBe(422);
    expect(missing.body.detail.error).toBe('destination_unreachable');
    expect(missing.body.detail.message).toMatch(/bucket does not exist/i);

    const closed = await create({ endpoint: 'http://127.0.0.1:9', name: 'closed' });
    expect(closed.status).toBe(422);
    expect(closed.body.detail.error).toBe('destination_unreachable');
    expect(closed.body.detail.message).toMatch(/ECONNREFUSED/);

    const stored = await stack.runtime.db.selectFrom('destinations').select('name').where('workspace_id', '=', ws.workspaceId).execute();
    expect(stored.map((d) => d.name)).not.toEqual(expect.arrayContaining(['wrong key']));
    expect(stored.map((d) => d.name)).not.toContain('missing');
    expect(stored.map((d) => d.name)).not.toContain('closed');
  });

  it('validates the body against the schema', async () => {
    const unknownKey = await create({ colour: 'blue' });
    expect(unknownKey.status).toBe(422);
    expect(unknownKey.body.detail[0].type).toBeDefined();
    const badFormat = await create({ format: 'parquet' });
    expect(badFormat.status).toBe(422);
    const noSecret = await stack.api.post('/v1/destinations', { headers: ws.auth, body: { ...body(), secret_access_key: undefined } });
    expect(noSecret.status).toBe(422);
  });

  it('keeps the secret access key sealed: the row opens to it, and a pg_dump of the database never holds it', async () => {
    const secret = 'S3RVER';
    const res = await create({ name: 'sealed' });
    expect(res.status).toBe(201);
    const row = await stack.runtime.db.selectFrom('destinations').selectAll().where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(row.secret_access_key.startsWith('sealed:v1:')).toBe(true);
    expect(sealerOf(stack.config).open(row.secret_access_key)).toBe(secret);
    // A secret unlike any other text of the database, to look for in the dump.
    await stack.runtime.db
      .updateTable('destinations')
      .set({ secret_access_key: sealerOf(stack.config).seal('zq-destination-secret-7f3a') })
      .where('id', '=', res.body.id)
      .execute();
    const { stdout } = await run('pg_dump', ['--no-owner', '--data-only', '--table=destinations', stack.databaseUrl], {
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(stdout).toContain(res.body.id);
    expect(stdout).not.toContain('zq-destination-secret-7f3a');
  });
});

describe('GET and DELETE /v1/destinations/{destination_id}', () => {
  it('answers 404 destination_not_found for an unknown destination and for another workspace’s', async () => {
    const other = await stack.workspace();
    const theirs = await create({ name: 'theirs' }, other.auth);
    expect(theirs.status).toBe(201);
    for (const id of ['dst_unknown', theirs.body.id]) {
      const got = await stack.api.get(`/v1/destinations/${id}`, { headers: ws.auth });
      expect(got.status).toBe(404);
      expect(got.body.detail).toEqual({
        error: 'destination_not_found',
        message: `No destination ${id} in this workspace.`,
        destination_id: id,
      });
      const deleted = await stack.api.delete(`/v1/destinations/${id}`, { headers: ws.auth });
      expect(deleted.status).toBe(404);
    }
  });

  it('deletes a destination: 204, then 404; a schedule that named it goes on without one', async () => {
    const dest = await create({ name: 'to delete' });
    const schedule = await stack.api.post('/v1/schedules', {
      headers: ws.auth,
      body: {
        name: 'daily',
        operation: 'profile',
        targets: ['natgeo'],
        frequency: 'daily',
        timezone: 'UTC',
        starts_at: '2030-01-01T09:00:00Z',
        destination_id: dest.body.id,
      },
    });
    expect(schedule.status).toBe(201);
    expect(schedule.body.destination_id).toBe(dest.body.id);
    const deleted = await stack.api.delete(`/v1/destinations/${dest.body.id}`, { headers: ws.auth });
    expect(deleted.status).toBe(204);
    expect((await stack.api.get(`/v1/destinations/${dest.body.id}`, { headers: ws.auth })).status).toBe(404);
    const after = await stack.api.get(`/v1/schedules/${schedule.body.id}`, { headers: ws.auth });
    expect(after.body.destination_id).toBeNull();
    const audit = await stack.runtime.db
      .selectFrom('audit_events')
      .select('action')
      .where('target_id', '=', dest.body.id)
      .orderBy('id')
      .execute();
    expect(audit.map((a) => a.action)).toEqual(['destination.created', 'destination.deleted']);
  });
});

describe('roles', () => {
  it('lets a viewer read destinations, a member neither create nor delete them', async () => {
    const dest = await create({ name: 'roles' });
    const viewer = { 'X-API-Key': (await createApiKey(stack.runtime.db, ws.workspaceId, 'viewer', { role: 'viewer' })).api_key };
    const member = { 'X-API-Key': (await createApiKey(stack.runtime.db, ws.workspaceId, 'member', { role: 'member' })).api_key };
    expect((await stack.api.get('/v1/destinations', { headers: viewer })).status).toBe(200);
    expect((await stack.api.get(`/v1/destinations/${dest.body.id}`, { headers: viewer })).status).toBe(200);
    const refused = await create({ name: 'by a member' }, member);
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatchObject({ error: 'forbidden', required_role: 'admin' });
    expect((await stack.api.delete(`/v1/destinations/${dest.body.id}`, { headers: member })).status).toBe(403);
    // A member submits work to a destination.
    const job = await stack.api.post('/v1/jobs', {
      headers: member,
      body: { operation: 'profile', target: 'natgeo', destination_id: dest.body.id },
    });
    expect(job.status).toBe(202);
    expect(job.body.delivery).toEqual({
      destination_id: dest.body.id,
      status: 'pending',
      key: `sdx/${job.body.id}.ndjson`,
      attempts: 0,
      error: null,
      delivered_at: null,
    });
  });
});

describe('destination_id on jobs, batches and schedules', () => {
  it('answers 404 destination_not_found for an unknown destination, and creates nothing', async () => {
    const other = await stack.workspace();
    const theirs = await create({ name: 'not yours' }, other.auth);
    for (const id of ['dst_nope', theirs.body.id]) {
      const job = await stack.api.post('/v1/jobs', {
        headers: ws.auth,
        body: { operation: 'profile', target: 'natgeo', destination_id: id },
      });
      expect(job.status).toBe(404);
      expect(job.body.detail).toMatchObject({ error: 'destination_not_found', destination_id: id });
      const extract = await stack.api.post('/v1/extract', {
        headers: ws.auth,
        body: { operation: 'profile', target: 'natgeo', destination_id: id },
      });
      expect(extract.status).toBe(404);
      const batch = await stack.api.post('/v1/batches', {
        headers: ws.auth,
        body: { operation: 'profile', targets: ['a', 'b'], destination_id: id },
      });
      expect(batch.status).toBe(404);
      expect(batch.body.detail.error).toBe('destination_not_found');
      const schedule = await stack.api.post('/v1/schedules', {
        headers: ws.auth,
        body: {
          name: 's',
          operation: 'profile',
          targets: ['natgeo'],
          frequency: 'daily',
          timezone: 'UTC',
          starts_at: '2030-01-01T09:00:00Z',
          destination_id: id,
        },
      });
      expect(schedule.status).toBe(404);
      expect(schedule.body.detail.error).toBe('destination_not_found');
    }
    const jobs = await stack.runtime.db
      .selectFrom('jobs')
      .select('id')
      .where('workspace_id', '=', ws.workspaceId)
      .where('destination_id', 'in', ['dst_nope', theirs.body.id])
      .execute();
    expect(jobs).toEqual([]);
  });

  it('records the delivery on the job and the batch (null without a destination), and the destination on the schedule, also through PUT', async () => {
    const dest = await create({ name: 'csv', format: 'csv', prefix: '' });
    const plain = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'profile', target: 'plain' } });
    expect(plain.body.delivery).toBeNull();
    const batch = await stack.api.post('/v1/batches', {
      headers: ws.auth,
      body: { operation: 'profile', targets: ['x1', 'x2'], destination_id: dest.body.id },
    });
    expect(batch.status).toBe(202);
    expect(batch.body.delivery).toEqual({
      destination_id: dest.body.id,
      status: 'pending',
      key: `${batch.body.id}.csv`,
      attempts: 0,
      error: null,
      delivered_at: null,
    });
    const child = await stack.api.get(`/v1/jobs/${batch.body.jobs[0].id}`, { headers: ws.auth });
    expect(child.body.delivery).toBeNull();
    const got = await stack.api.get(`/v1/batches/${batch.body.id}`, { headers: ws.auth });
    expect(got.body.delivery.key).toBe(`${batch.body.id}.csv`);

    const schedule = await stack.api.post('/v1/schedules', {
      headers: ws.auth,
      body: {
        name: 'weekly',
        operation: 'profile',
        targets: ['natgeo'],
        frequency: 'weekly',
        timezone: 'UTC',
        starts_at: '2030-01-01T09:00:00Z',
      },
    });
    expect(schedule.body.destination_id).toBeNull();
    const put = await stack.api.put(`/v1/schedules/${schedule.body.id}`, {
      headers: ws.auth,
      body: {
        name: 'weekly',
        operation: 'profile',
        targets: ['natgeo'],
        frequency: 'weekly',
        timezone: 'UTC',
        starts_at: '2030-01-01T09:00:00Z',
        destination_id: dest.body.id,
      },
    });
    expect(put.status).toBe(200);
    expect(put.body.destination_id).toBe(dest.body.id);
    // An occurrence's job is submitted to the schedule's destination.
    const ran = await stack.api.post(`/v1/schedules/${schedule.body.id}/run`, { headers: ws.auth });
    expect(ran.status).toBe(202);
    const runJob = await stack.api.get(`/v1/jobs/${ran.body.runs[0].job_id}`, { headers: ws.auth });
    expect(runJob.body.delivery).toMatchObject({ destination_id: dest.body.id, status: 'pending', key: `${runJob.body.id}.csv` });
    const unknown = await stack.api.put(`/v1/schedules/${schedule.body.id}`, {
      headers: ws.auth,
      body: {
        name: 'weekly',
        operation: 'profile',
        targets: ['natgeo'],
        frequency: 'weekly',
        timezone: 'UTC',
        starts_at: '2030-01-01T09:00:00Z',
        destination_id: 'dst_gone',
      },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail.error).toBe('destination_not_found');
    // A job with a destination is never answered with an identical queued twin: its delivery is its own.
    const first = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'profile', target: 'twin' } });
    const second = await stack.api.post('/v1/jobs', {
      headers: ws.auth,
      body: { operation: 'profile', target: 'twin', destination_id: dest.body.id },
    });
    expect(second.body.deduplicated).toBe(false);
    expect(second.body.id).not.toBe(first.body.id);
    expect(second.body.delivery.destination_id).toBe(dest.body.id);
  });
});

describe('a custom endpoint passes the webhook URL rules', () => {
  const dns = new Map<string, string>([
    ['s3.example.com', '93.184.216.34'],
    ['loopback.example.com', '127.0.0.1'],
    ['metadata.example.com', '169.254.169.254'],
  ]);
  const resolver = (host: string): Promise<LookupAddress[]> => {
    const address = dns.get(host);
    if (!address) return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }));
    return Promise.resolve([{ address, family: 4 }]);
  };
  let strict: TestStack;
  beforeAll(async () => {
    strict = await startTestStack({ webhookResolver: resolver });
  });
  afterAll(async () => {
    await strict.close();
  });

  it('refuses http, loopback, link-local and private addresses (names resolved) with 422 destination_unreachable, before any request', async () => {
    const owner = await strict.workspace();
    const cases: Array<[string, RegExp]> = [
      [s3.endpoint, /must use https/],
      ['https://loopback.example.com', /non-public address/],
      ['https://metadata.example.com', /non-public address/],
      ['https://127.0.0.1:9000', /loopback/],
      ['https://[::ffff:10.0.0.1]', /private/],
      ['https://user:pw@s3.example.com', /user name or password/],
    ];
    for (const [endpoint, why] of cases) {
      const res = await strict.api.post('/v1/destinations', { headers: owner.auth, body: { ...body(), endpoint } });
      expect(res.status).toBe(422);
      expect(res.body.detail.error).toBe('destination_unreachable');
      expect(res.body.detail.message).toMatch(/^This endpoint cannot be used: /);
      expect(res.body.detail.message).toMatch(why);
    }
    expect(await strict.runtime.db.selectFrom('destinations').select('id').execute()).toEqual([]);
  });
});
