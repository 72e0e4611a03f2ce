import { Writable } from 'node:stream';
import request from 'supertest';
import { CATALOG, PLATFORMS } from '@sdx/catalog';
import { createLogger } from '@sdx/config';
import { revokeApiKey } from '@sdx/domain/testing';
import { createApp } from '@sdx/app-api';
import { countWorkspaceRows, startTestStack, type TestStack } from '@sdx/testing';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack.close();
});

const EXPECTED_LABELS = { instagram: 'Instagram', tiktok: 'TikTok', youtube: 'YouTube', twitter: 'X (Twitter)', facebook: 'Facebook' };

describe('GET /v1/platforms', () => {
  it('lists the 55 operations with the maxima and prices of api-v1.md 2.3, without credentials', async () => {
    const res = await stack.api.get('/v1/platforms');
    expect(res.status).toBe(200);
    expect(res.body.map((p: { platform: string }) => p.platform)).toEqual(['instagram', 'tiktok', 'youtube', 'twitter', 'facebook']);
    expect(res.body.reduce((n: number, p: { operations: unknown[] }) => n + p.operations.length, 0)).toBe(55);
    for (const p of res.body) {
      expect(p.label).toBe(EXPECTED_LABELS[p.platform as keyof typeof EXPECTED_LABELS]);
      expect(p.operations.map((o: { operation: string }) => o.operation)).toEqual(
        CATALOG[p.platform as keyof typeof CATALOG].map((o) => o.operation),
      );
      for (const o of p.operations) expect(o.requires_session).toBe(false);
    }
    const op = (platform: string, operation: string) =>
      res.body
        .find((p: { platform: string }) => p.platform === platform)
        .operations.find((o: { operation: string }) => o.operation === operation);
    // Spot checks straight from the spec's tables.
    expect(op('instagram', 'followers')).toEqual({
      operation: 'followers',
      max_results: 5000,
      default_limit: 12,
      credits_per_result: 2,
      results_per_credit: 1,
      base_credits: 0,
      requires_session: false,
      monitorable: false,
    });
    expect(op('instagram', 'highlights')).toEqual({
      operation: 'highlights',
      max_results: 50,
      default_limit: 12,
      credits_per_result: 0,
      results_per_credit: 1,
      base_credits: 10,
      requires_session: false,
      monitorable: false,
    });
    expect(op('tiktok', 'adlibrary_search')).toMatchObject({ max_results: 100, base_credits: 10, credits_per_result: 0 });
    expect(op('instagram', 'reels')).toMatchObject({ monitorable: true });
    expect(op('youtube', 'shorts')).toMatchObject({ monitorable: true });
    expect(op('tiktok', 'hashtag')).toMatchObject({ monitorable: false });
    expect(op('youtube', 'playlist_items')).toMatchObject({ max_results: 500, credits_per_result: 1 });
    expect(op('youtube', 'transcript')).toMatchObject({ max_results: 1, default_limit: 1, credits_per_result: 10 });
    expect(op('twitter', 'followers')).toMatchObject({ max_results: 25000, credits_per_result: 2 });
    expect(op('facebook', 'adlibrary_companies')).toMatchObject({ max_results: 100, credits_per_result: 3 });
    expect(op('facebook', 'profile_analytics')).toMatchObject({ max_results: 1, credits_per_result: 5 });
  });
});

describe('authentication', () => {
  it('answers 401 missing_authentication without a key, with a request id', async () => {
    const res = await stack.api.get('/v1/account');
    expect(res.status).toBe(401);
    expect(res.body.detail.error).toBe('missing_authentication');
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('treats an Authorization scheme other than Bearer as no credentials', async () => {
    const ws = await stack.workspace();
    const res = await stack.api.get('/v1/account', { headers: { Authorization: `Basic ${ws.apiKey}` } });
    expect(res.status).toBe(401);
    expect(res.body.detail.error).toBe('missing_authentication');
  });

  it('answers 401 invalid_api_key for an unknown key', async () => {
    const res = await stack.api.get('/v1/account', { headers: { 'X-API-Key': 'sdx_live_0000000000000000000000000000000000000000' } });
    expect(res.status).toBe(401);
    expect(res.body.detail.error).toBe('invalid_api_key');
  });

  it('accepts X-API-Key and Bearer, and a revocation takes effect at once', async () => {
    const ws = await stack.workspace({ credits: 500 });
    const a = await stack.api.get('/v1/account', { headers: { 'X-API-Key': ws.apiKey } });
    expect(a.status).toBe(200);
    const b = await stack.api.get('/v1/account', { headers: { Authorization: `Bearer ${ws.apiKey}` } });
    expect(b.status).toBe(200);
    await revokeApiKey(stack.runtime.db, ws.keyId);
    const c = await stack.api.get('/v1/account', { headers: ws.auth });
    expect(c.status).toBe(401);
    expect(c.body.detail.error).toBe('invalid_api_key');
  });

  it('checks X-Workspace-ID against the key', async () => {
    const ws = await stack.workspace();
    const other = await stack.workspace();
    const same = await stack.api.get('/v1/account', { headers: { ...ws.auth, 'X-Workspace-ID': ws.workspaceId } });
    expect(same.status).toBe(200);
    const foreign = await stack.api.get('/v1/account', { headers: { ...ws.auth, 'X-Workspace-ID': other.workspaceId } });
    expect(foreign.status).toBe(403);
    expect(foreign.body.detail.error).toBe('workspace_forbidden');
    const long = await stack.api.get('/v1/account', { headers: { ...ws.auth, 'X-Workspace-ID': 'x'.repeat(37) } });
    expect(long.status).toBe(422);
    expect(long.body.detail[0].loc).toEqual(['header', 'x-workspace-id']);
  });

  it('never logs a key', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const log = createLogger({ logLevel: 'info' }, {}, sink);
    const app = createApp({
      services: { ...stack.runtime.services, log },
      registry: stack.runtime.registry,
      limiter: { consume: (_w, limit) => Promise.resolve({ allowed: true, limit, remaining: limit, resetMs: 60_000 }) },
      redis: stack.runtime.redis,
    });
    const ws = await stack.workspace();
    await request(app).get('/v1/account').set('X-API-Key', ws.apiKey);
    await request(app).get('/v1/usage/current').set('Authorization', `Bearer ${ws.apiKey}`);
    await request(app).get('/v1/account').set('X-API-Key', `${ws.apiKey}x`);
    const text = lines.join('');
    expect(lines.length).toBeGreaterThanOrEqual(3);
    expect(text).toContain('[Redacted]');
    expect(text).not.toContain(ws.apiKey);
  });
});

describe('X-Request-ID', () => {
  it('echoes a well-formed caller id and replaces a malformed one', async () => {
    const ws = await stack.workspace();
    const echoed = await stack.api.get('/v1/account', { headers: { ...ws.auth, 'X-Request-ID': 'abc-123:x.y_z' } });
    expect(echoed.headers['x-request-id']).toBe('abc-123:x.y_z');
    const replaced = await stack.api.get('/v1/account', { headers: { ...ws.auth, 'X-Request-ID': 'bad id with spaces' } });
    expect(replaced.headers['x-request-id']).not.toBe('bad id with spaces');
    const onError = await stack.api.get('/v1/jobs/job_unknown', { headers: { ...ws.auth, 'X-Request-ID': 'err-1' } });
    expect(onError.status).toBe(404);
    expect(onError.headers['x-request-id']).toBe('err-1');
  });
});

describe('account and usage', () => {
  it('reports the plan and the credits', async () => {
    const ws = await stack.workspace({ credits: 700, rateLimitPerMinute: 90, maxActiveJobs: 7, maxResultLimit: 300 });
    const account = await stack.api.get('/v1/account', { headers: ws.auth });
    expect(account.body).toEqual({
      organization_id: ws.workspaceId,
      organization_name: expect.any(String),
      monthly_quota: 700,
      rate_limit_per_minute: 90,
      max_result_limit: 300,
      max_active_jobs: 7,
      authenticated_key_id: ws.keyId,
      auth_type: 'api_key',
      role: 'owner',
      user: null,
      workspaces: [{ id: ws.workspaceId, name: expect.any(String), kind: 'team', role: 'owner', require_two_factor: false }],
      credits: { available_credits: 700, purchased_credits: 0, lifetime_purchased: 0, month_spent_credits: 0 },
    });
    expect(account.headers['ratelimit-limit']).toBe('90');
    const usage = await stack.api.get('/v1/usage/current', { headers: ws.auth });
    const now = new Date();
    expect(usage.body).toEqual({
      period_start: `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}-01`,
      credit_limit: 700,
      units_used: 0,
      units_reserved: 0,
      units_remaining: 700,
      credits_used: 0,
      credits_reserved: 0,
      credits_remaining: 700,
      purchased_credits: 0,
      promotional_credits: 0,
      promotional_expires_at: null,
      lifetime_purchased: 0,
      lifetime_spent: 0,
    });
    await ws.grant(50, 'purchased');
    const expires = new Date(Date.now() + 86_400_000);
    await ws.grant(20, 'promotional', expires);
    const after = await stack.api.get('/v1/usage/current', { headers: ws.auth });
    expect(after.body).toMatchObject({
      purchased_credits: 50,
      lifetime_purchased: 50,
      promotional_credits: 20,
      promotional_expires_at: expires.toISOString(),
      credits_remaining: 770,
    });
  });
});

describe('validation', () => {
  it('renders HTTPValidationError for an unknown key and a bad limit', async () => {
    const ws = await stack.workspace();
    const res = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'profile', target: 'abc', limit: 0, bogus: 1 } });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ loc: ['body', 'bogus'], type: 'extra_forbidden' }),
        expect.objectContaining({ loc: ['body', 'limit'], type: 'greater_than_equal' }),
      ]),
    );
  });
  it('names missing fields, bad enums, wrong types and query errors', async () => {
    const ws = await stack.workspace();
    const missing = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { target: 'abc' } });
    expect(missing.status).toBe(422);
    expect(missing.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'operation'], type: 'missing' })]);
    const badEnum = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'nope', target: 'abc' } });
    expect(badEnum.body.detail[0]).toMatchObject({ loc: ['body', 'operation'], type: 'enum' });
    const badType = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'profile', target: 'abc', limit: 'many' } });
    expect(badType.body.detail[0]).toMatchObject({ loc: ['body', 'limit'], type: 'int_parsing' });
    const tooLong = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'profile', target: 'a'.repeat(256) } });
    expect(tooLong.body.detail[0]).toMatchObject({ loc: ['body', 'target'], type: 'string_too_long', ctx: { max_length: 255 } });
    const query = await stack.api.get('/v1/jobs', { headers: ws.auth, query: { limit: 101 } });
    expect(query.status).toBe(422);
    expect(query.body.detail[0]).toMatchObject({ loc: ['query', 'limit'], type: 'less_than_equal', ctx: { le: 100 } });
  });
  it('takes JSON types as sent in the body: no string from a number, boolean or null', async () => {
    const ws = await stack.workspace();
    const cases: Array<[Record<string, unknown>, string, string, unknown]> = [
      [{ operation: 'profile', target: 123 }, 'target', 'string_type', 123],
      [{ operation: 'profile', target: true }, 'target', 'string_type', true],
      [{ operation: 'profile', target: null }, 'target', 'string_type', null],
      [{ operation: 'posts', target: 'nasa', limit: true }, 'limit', 'int_parsing', true],
      [{ operation: 'posts', target: 'nasa', limit: null }, 'limit', 'int_parsing', null],
    ];
    for (const [body, field, type, input] of cases) {
      const res = await stack.api.post('/v1/jobs', { headers: ws.auth, body });
      expect(res.status).toBe(422);
      expect(res.body.detail).toContainEqual(expect.objectContaining({ loc: ['body', field], type, input }));
    }
    expect(await countWorkspaceRows(stack, 'jobs', ws.workspaceId)).toBe(0);
    // Query parameters arrive as text and are still read as numbers.
    const listed = await stack.api.get('/v1/jobs', { headers: ws.auth, query: { limit: '5' } });
    expect(listed.status).toBe(200);
  });
  it('answers 422 to malformed JSON, never 500', async () => {
    const ws = await stack.workspace();
    const res = await stack.api.post('/v1/jobs', { headers: ws.auth, raw: '{"operation": "profile",' });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['body'], type: 'json_invalid' });
  });
  it('answers 422 to a path parameter that is not valid percent-encoding, never 500', async () => {
    const ws = await stack.workspace();
    for (const path of ['/v1/jobs/%ZZ', '/v1/jobs/%E0%A4%A/cancel', '/v1/batches/%ZZ', '/v1/schedules/%ZZ']) {
      const res = path.endsWith('cancel')
        ? await stack.api.post(path, { headers: ws.auth })
        : await stack.api.get(path, { headers: ws.auth });
      expect(res.status).toBe(422);
      expect(res.body.detail[0]).toMatchObject({ loc: ['path'], type: 'value_error' });
    }
  });
  it('answers 405 with Allow to a method a known path does not serve', async () => {
    // Undocumented on purpose, so not checked against openapi.yaml.
    const put = await request(stack.app).put('/v1/jobs');
    expect(put.status).toBe(405);
    expect(put.body.detail).toMatchObject({ error: 'method_not_allowed' });
    expect(put.headers.allow.split(', ').sort()).toEqual(['GET', 'POST']);
    const del = await request(stack.app).delete('/v1/jobs/job_01');
    expect(del.status).toBe(405);
    expect(del.headers.allow.split(', ').sort()).toEqual(['GET']);
    const patch = await request(stack.app).patch('/v1/schedules/sch_01');
    expect(patch.status).toBe(405);
    expect(patch.headers.allow.split(', ').sort()).toEqual(['DELETE', 'GET', 'PUT']);
    expect((await request(stack.app).put('/v1/nope')).status).toBe(404);
  });
  it('answers HEAD as GET without a body, authentication included', async () => {
    // Undocumented on purpose (openapi.yaml lists GET), so not checked against it.
    const health = await request(stack.app).head('/healthz');
    expect(health.status).toBe(200);
    expect(health.text).toBeUndefined();
    const ws = await stack.workspace();
    // The same headers for the same Accept-Encoding (supertest sends gzip on GET only unless told).
    for (const encoding of ['identity', 'gzip']) {
      const get = await request(stack.app).get('/v1/platforms').set('Accept-Encoding', encoding);
      const head = await request(stack.app).head('/v1/platforms').set('Accept-Encoding', encoding);
      expect(head.status).toBe(200);
      expect(head.headers['content-length']).toBe(get.headers['content-length']);
      expect(head.headers['content-encoding']).toBe(get.headers['content-encoding']);
      expect(head.headers['x-request-id']).toBeTruthy();
    }
    expect((await request(stack.app).head('/v1/account').set(ws.auth)).status).toBe(200);
    expect((await request(stack.app).head('/v1/account')).status).toBe(401);
    expect((await request(stack.app).head('/v1/jobs/job_missing').set(ws.auth)).status).toBe(404);
  });
  it('answers JSON 404 on unknown paths', async () => {
    // Undocumented on purpose, so not checked against openapi.yaml.
    const res = await request(stack.app).get('/v1/nope');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(res.body.detail.error).toBe('not_found');
  });
});

describe('health', () => {
  it('reports liveness and readiness', async () => {
    expect((await stack.api.get('/healthz')).body).toEqual({ status: 'ok' });
    expect((await stack.api.get('/readyz')).body).toEqual({ status: 'ok', checks: { postgres: 'ok', redis: 'ok' } });
  });
});

it('catalog sanity', () => {
  expect(PLATFORMS.map((p) => CATALOG[p].length)).toEqual([14, 11, 10, 7, 13]);
});
