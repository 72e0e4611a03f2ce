import type { LookupAddress } from 'node:dns';
import { startTestStack, type SeededWorkspace, type TestStack, TEST_SECRETS_KEY, type LooseJson } from '@sdx/testing';

/**
 * Webhook endpoints over HTTP (extensions.md 5): creation with the secret shown once, listing
 * and reading without it, changes, deletion, the audit log of each, validation, and the SSRF
 * guard: a URL that is, or resolves to, a loopback, private, link-local, multicast or
 * unspecified address (IPv4, IPv6, IPv4-mapped IPv6) is refused at creation and again at each
 * delivery, after the DNS answer changed. Host names resolve through a fake DNS (an outside
 * thing), so nothing here leaves the machine.
 */
const dns = new Map<string, string[]>([
  ['hooks.example.com', ['93.184.216.34']],
  ['v6.example.com', ['2606:2800:220:1:248:1893:25c8:1946']],
  ['loopback.example.com', ['127.0.0.1']],
  ['private.example.com', ['10.0.0.1']],
  ['metadata.example.com', ['169.254.169.254']],
  ['v6-loopback.example.com', ['::1']],
  ['mapped.example.com', ['::ffff:127.0.0.1']],
  ['mixed.example.com', ['93.184.216.34', '192.168.1.10']],
]);
const resolver = (host: string): Promise<LookupAddress[]> => {
  const addresses = dns.get(host);
  if (!addresses) return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }));
  return Promise.resolve(addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
};

let stack: TestStack;
let ws: SeededWorkspace;
beforeAll(async () => {
  stack = await startTestStack({ webhookResolver: resolver, env: { WEBHOOK_RETRY_SCHEDULE: '' } });
  ws = await stack.workspace({ credits: 1000 });
});
afterAll(async () => {
  await stack.close();
});

const create = (body: Record<string, unknown>, auth: Record<string, string> = ws.auth) =>
  stack.api.post('/v1/webhooks', { headers: auth, body });

describe('POST /v1/webhooks', () => {
  it('registers a webhook and shows its secret once', async () => {
    const res = await create({ url: 'https://hooks.example.com/sdx', events: ['job.completed', 'batch.failed'], description: 'pipeline' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^whk_/),
      url: 'https://hooks.example.com/sdx',
      events: ['job.completed', 'batch.failed'],
      description: 'pipeline',
      enabled: true,
      created_at: expect.any(String),
      secret: expect.stringMatching(/^whsec_/),
    });
    expect(Buffer.from(res.body.secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    const listed = await stack.api.get('/v1/webhooks', { headers: ws.auth });
    expect(listed.body[0]).toEqual({ ...res.body, secret: undefined });
    expect(JSON.stringify(listed.body)).not.toContain(res.body.secret);
    const one = await stack.api.get(`/v1/webhooks/${res.body.id}`, { headers: ws.auth });
    expect(one.body.secret).toBeUndefined();
    expect(one.body.id).toBe(res.body.id);
  });

  it('takes `*` for every event, alone', async () => {
    const res = await create({ url: 'https://v6.example.com/in', events: ['*', 'job.failed'] });
    expect(res.status).toBe(201);
    expect(res.body.events).toEqual(['*']);
    expect(res.body.description).toBeNull();
  });

  it.each([
    ['https://127.0.0.1/hook', /127\.0\.0\.1 is a loopback address/],
    ['https://10.0.0.1/hook', /10\.0\.0\.1 is a private address/],
    ['https://169.254.169.254/latest/meta-data', /169\.254\.169\.254 is a linkLocal address/],
    ['https://[::1]/hook', /::1 is a loopback address/],
    ['https://[::ffff:127.0.0.1]/hook', /::ffff:7f00:1 is a loopback address/],
    ['https://0.0.0.0/hook', /unspecified/],
    ['https://[ff02::1]/hook', /multicast/],
    ['https://loopback.example.com/hook', /resolves to a non-public address;/],
    ['https://private.example.com/hook', /resolves to a non-public address;/],
    ['https://metadata.example.com/hook', /resolves to a non-public address;/],
    ['https://v6-loopback.example.com/hook', /resolves to a non-public address;/],
    ['https://mapped.example.com/hook', /resolves to a non-public address;/],
    ['https://mixed.example.com/hook', /resolves to a non-public address;/],
    ['https://nowhere.example.com/hook', /could not be resolved/],
    ['http://hooks.example.com/hook', /must use https/],
    ['https://user:pw@hooks.example.com/hook', /user name or password/],
    ['not a url', /not an absolute URL/],
  ])('refuses %s with 422 invalid_webhook_url', async (url, reason) => {
    const res = await create({ url, events: ['*'] });
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatchObject({ error: 'invalid_webhook_url', url });
    expect(res.body.detail.message).toMatch(reason);
    // A name's answer is never told back: not the address, not its kind.
    for (const address of dns.get(url.split('/')[2] ?? '') ?? []) expect(res.body.detail.message).not.toContain(address);
  });

  it.each([
    ['http://hooks.example.com/hook', 'WEBHOOK_ALLOW_HTTP=1'],
    ['https://private.example.com/hook', 'WEBHOOK_ALLOW_PRIVATE_NETWORKS=1'],
    ['https://127.0.0.1/hook', 'WEBHOOK_ALLOW_PRIVATE_NETWORKS=1'],
  ])('outside production, names the setting that allows %s for local development', async (url, setting) => {
    const res = await create({ url, events: ['*'] });
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatchObject({ error: 'invalid_webhook_url', url });
    expect(res.body.detail.message).toContain(`for local development, start the service with ${setting} to allow it`);
  });

  it('names no setting for a refusal no setting would lift', async () => {
    for (const url of ['https://nowhere.example.com/hook', 'https://user:pw@hooks.example.com/hook', 'not a url']) {
      const res = await create({ url, events: ['*'] });
      expect(res.status).toBe(422);
      expect(res.body.detail.message).not.toMatch(/WEBHOOK_ALLOW/);
    }
  });

  it('in production, names no setting in the refusal', async () => {
    const production = await startTestStack({
      webhookResolver: resolver,
      env: { NODE_ENV: 'production', SECRETS_KEY: TEST_SECRETS_KEY, PROVIDER_MODE: 'sandbox', WEBHOOK_RETRY_SCHEDULE: '' },
    });
    try {
      const tenant = await production.workspace({ credits: 1000 });
      for (const [url, reason] of [
        ['http://hooks.example.com/hook', /must use https/],
        ['https://private.example.com/hook', /resolves to a non-public address;/],
      ] as const) {
        const res = await production.api.post('/v1/webhooks', { headers: tenant.auth, body: { url, events: ['*'] } });
        expect(res.status).toBe(422);
        expect(res.body.detail).toMatchObject({ error: 'invalid_webhook_url', url });
        expect(res.body.detail.message).toMatch(reason);
        expect(res.body.detail.message).not.toMatch(/WEBHOOK_ALLOW|local development/);
      }
    } finally {
      await production.close();
    }
  });

  it('validates the body', async () => {
    for (const body of [
      { url: 'https://hooks.example.com/x', events: [] },
      { url: 'https://hooks.example.com/x', events: ['job.exploded'] },
      { url: 'https://hooks.example.com/x' },
      { url: 'https://hooks.example.com/x', events: ['*'], secret: 'mine' },
    ]) {
      const res = await create(body);
      expect(res.status).toBe(422);
      expect(Array.isArray(res.body.detail)).toBe(true);
    }
  });

  it('is for admins: a member key gets 403 forbidden', async () => {
    const member = await stack.api.post('/v1/keys', { headers: ws.auth, body: { name: 'member', role: 'member' } });
    const res = await create({ url: 'https://hooks.example.com/x', events: ['*'] }, { 'X-API-Key': member.body.api_key });
    expect(res.status).toBe(403);
    expect(res.body.detail).toMatchObject({ error: 'forbidden', required_role: 'admin' });
    expect((await stack.api.get('/v1/webhooks', { headers: { 'X-API-Key': member.body.api_key } })).status).toBe(200);
  });
});

describe('changes, deletion and the audit log', () => {
  it('changes, rotates and deletes, each recorded in the audit log without the secret', async () => {
    const created = await create({ url: 'https://hooks.example.com/a', events: ['job.completed'] });
    const id = created.body.id as string;
    const patched = await stack.api.patch(`/v1/webhooks/${id}`, {
      headers: ws.auth,
      body: { url: 'https://v6.example.com/b', enabled: false, description: 'moved' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      url: 'https://v6.example.com/b',
      enabled: false,
      description: 'moved',
      events: ['job.completed'],
    });
    expect(
      (await stack.api.patch(`/v1/webhooks/${id}`, { headers: ws.auth, body: { url: 'https://private.example.com/c' } })).body.detail.error,
    ).toBe('invalid_webhook_url');
    expect((await stack.api.patch(`/v1/webhooks/${id}`, { headers: ws.auth, body: {} })).status).toBe(422);
    const rotated = await stack.api.post(`/v1/webhooks/${id}/rotate-secret`, { headers: ws.auth });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(created.body.secret);
    expect((await stack.api.delete(`/v1/webhooks/${id}`, { headers: ws.auth })).status).toBe(204);
    expect((await stack.api.get(`/v1/webhooks/${id}`, { headers: ws.auth })).status).toBe(404);
    expect((await stack.api.delete(`/v1/webhooks/${id}`, { headers: ws.auth })).body.detail.error).toBe('webhook_not_found');

    const audit = await stack.api.get('/v1/audit-events', { headers: ws.auth });
    const mine = (audit.body as Array<Record<string, LooseJson>>).filter((e) => e.target_id === id);
    expect(mine.map((e) => e.action)).toEqual(['webhook.deleted', 'webhook.secret_rotated', 'webhook.updated', 'webhook.created']);
    expect(mine.every((e) => e.target_type === 'webhook' && e.actor.type === 'api_key')).toBe(true);
    expect(mine.find((e) => e.action === 'webhook.updated')!.data).toEqual({
      url: 'https://v6.example.com/b',
      description: 'moved',
      enabled: false,
    });
    expect(JSON.stringify(mine)).not.toContain('whsec_');
  });

  it("answers 404 for another workspace's webhook and deliveries", async () => {
    const other = await stack.workspace();
    const theirs = await create({ url: 'https://hooks.example.com/theirs', events: ['*'] }, other.auth);
    for (const [method, path] of [
      ['get', `/v1/webhooks/${theirs.body.id}`],
      ['get', `/v1/webhooks/${theirs.body.id}/deliveries`],
      ['post', `/v1/webhooks/${theirs.body.id}/test`],
      ['post', `/v1/webhooks/${theirs.body.id}/rotate-secret`],
      ['delete', `/v1/webhooks/${theirs.body.id}`],
    ] as const) {
      const res = await stack.api.call(method, path, { headers: ws.auth });
      expect([path, res.status, res.body.detail.error]).toEqual([path, 404, 'webhook_not_found']);
    }
  });
});

describe('deliveries', () => {
  it('lists deliveries newest first, a page at a time, and refuses an unknown one', async () => {
    const hook = await create({ url: 'https://hooks.example.com/log', events: ['webhook.test'] });
    const sent = [];
    for (let i = 0; i < 3; i++) sent.push((await stack.api.post(`/v1/webhooks/${hook.body.id}/test`, { headers: ws.auth })).body);
    const first = await stack.api.get(`/v1/webhooks/${hook.body.id}/deliveries`, { headers: ws.auth, query: { limit: 2 } });
    expect(first.body.map((d: { id: string }) => d.id)).toEqual([sent[2].id, sent[1].id]);
    const next = await stack.api.get(`/v1/webhooks/${hook.body.id}/deliveries`, {
      headers: ws.auth,
      query: { limit: 2, starting_after: sent[1].id },
    });
    expect(next.body.map((d: { id: string }) => d.id)).toEqual([sent[0].id]);
    expect(new Set(sent.map((d) => d.event_id)).size).toBe(3);
    const missing = await stack.api.post(`/v1/webhooks/${hook.body.id}/deliveries/dlv_missing/redeliver`, { headers: ws.auth });
    expect([missing.status, missing.body.detail.error]).toEqual([404, 'delivery_not_found']);
    // Its log goes with it (and no worker of a later test sends its tests anywhere).
    expect((await stack.api.delete(`/v1/webhooks/${hook.body.id}`, { headers: ws.auth })).status).toBe(204);
    expect(await stack.runtime.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', hook.body.id).execute()).toEqual(
      [],
    );
  });

  it('refuses at delivery a host whose DNS answer changed to a private address since creation', async () => {
    dns.set('rebind.example.com', ['93.184.216.34']);
    const hook = await create({ url: 'https://rebind.example.com/hook', events: ['webhook.test'] });
    expect(hook.status).toBe(201);
    dns.set('rebind.example.com', ['127.0.0.1']);
    const test = await stack.api.post(`/v1/webhooks/${hook.body.id}/test`, { headers: ws.auth });
    const worker = stack.startWorker(1);
    try {
      let delivery: Record<string, LooseJson> = {};
      // attempts counts an attempt from its start; error is recorded at its end.
      for (let i = 0; i < 200 && !delivery.error; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        delivery = (await stack.api.get(`/v1/webhooks/${hook.body.id}/deliveries`, { headers: ws.auth })).body[0];
      }
      expect(delivery).toMatchObject({ id: test.body.id, status: 'pending', attempts: 1, response_status: null });
      expect(delivery.error).toMatch(/^refused: rebind\.example\.com resolves to a non-public address;/);
      expect(delivery.error).not.toContain('127.0.0.1');
      expect(delivery.next_attempt_at).not.toBeNull();
    } finally {
      await worker.close();
      stack.worker = null;
    }
  });
});
