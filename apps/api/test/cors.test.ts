import request from 'supertest';
import { corsOrigins, loadConfig } from '@sdx/config';
import { createApp, RedisRateLimiter } from '@sdx/app-api';
import { signUpUser, startTestStack, type SeededWorkspace, type TestStack } from '@sdx/testing';

/**
 * CORS (extensions.md 7): the origins of CORS_ORIGINS may call with credentials, preflights pass
 * for every header the API reads, and the headers clients need are exposed. Other origins get no
 * Access-Control-* header at all, and without CORS_ORIGINS nobody does.
 */
const APP = 'https://app.example.com';
const DEV = 'http://localhost:5173';
const EVIL = 'https://evil.example.net';

let stack: TestStack;
let ws: SeededWorkspace;

beforeAll(async () => {
  stack = await startTestStack({ env: { CORS_ORIGINS: ` ${APP}/, ${DEV} ` } });
});

beforeEach(async () => {
  ws = await stack.workspace();
});

afterAll(async () => {
  await stack.close();
});

const REQUEST_HEADERS = [
  'X-API-Key',
  'X-CSRF-Token',
  'X-Workspace-ID',
  'Idempotency-Key',
  'If-None-Match',
  'X-Request-ID',
  'Content-Type',
  'Authorization',
  'Cache-Control',
  'Mcp-Protocol-Version',
  'Mcp-Session-Id',
];
const EXPOSED = [
  'X-Request-ID',
  'Location',
  'Link',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'Retry-After',
  'Content-Disposition',
  'ETag',
  'Mcp-Session-Id',
];

/** A header's comma-separated values (a header sent more than once: all its lines'). */
const listOf = (value: unknown) =>
  (Array.isArray(value) ? value.join(',') : typeof value === 'string' ? value : '')
    .split(',')
    .map((v) => v.trim().toLowerCase())
    .filter(Boolean);

function preflight(app: TestStack['app'], origin: string, method = 'POST', path = '/v1/jobs') {
  return request(app)
    .options(path)
    .set('Origin', origin)
    .set('Access-Control-Request-Method', method)
    .set('Access-Control-Request-Headers', REQUEST_HEADERS.join(', ').toLowerCase());
}

describe('an allowed origin', () => {
  it.each([APP, DEV])('passes the preflight of %s for every header the API reads, with credentials', async (origin) => {
    const res = await preflight(stack.app, origin);
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(origin);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(listOf(res.headers['access-control-allow-headers'])).toEqual(
      expect.arrayContaining(REQUEST_HEADERS.map((h) => h.toLowerCase())),
    );
    expect(listOf(res.headers['access-control-allow-methods'])).toEqual(expect.arrayContaining(['get', 'post', 'put', 'patch', 'delete']));
    expect(res.headers['access-control-max-age']).toBe('600');
    expect(listOf(res.headers.vary)).toContain('origin');
    expect(res.headers['x-request-id']).toBeDefined();
  });

  it('reads the answer and the headers clients need: request ID, Location, rate limit', async () => {
    const res = await stack.api.post('/v1/jobs', {
      headers: { ...ws.auth, Origin: APP },
      body: { operation: 'profile', target: 'natgeo' },
    });
    expect(res.status).toBe(202);
    expect(res.headers['access-control-allow-origin']).toBe(APP);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(listOf(res.headers['access-control-expose-headers'])).toEqual(EXPOSED.map((h) => h.toLowerCase()).sort());
    for (const name of ['x-request-id', 'location', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'])
      expect(res.headers[name]).toBeDefined();
  });

  it('works with the session cookie and the CSRF token, as a front end on that origin sends them', async () => {
    const user = await signUpUser(stack);
    const read = await stack.api.get('/v1/auth/session', { headers: { ...user.read(), Origin: DEV } });
    expect([read.status, read.headers['access-control-allow-origin']]).toEqual([200, DEV]);
    const write = await stack.api.post('/v1/workspaces', {
      headers: { ...user.write(), Origin: DEV },
      body: { name: 'From the front end' },
    });
    expect([write.status, write.headers['access-control-allow-origin'], write.headers['access-control-allow-credentials']]).toEqual([
      201,
      DEV,
      'true',
    ]);
  });

  it('answers errors with the same headers, so the page can read why', async () => {
    const res = await stack.api.get('/v1/account', { headers: { Origin: APP } });
    expect([res.status, res.body.detail.error, res.headers['access-control-allow-origin']]).toEqual([401, 'missing_authentication', APP]);
  });
});

describe('another origin', () => {
  it('gets no CORS header on a preflight, which then meets the API as any OPTIONS does', async () => {
    const res = await preflight(stack.app, EVIL);
    expect(res.status).toBe(405);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect(res.headers['access-control-allow-headers']).toBeUndefined();
  });

  it('gets no CORS header on a request either (the browser keeps the answer from the page)', async () => {
    for (const origin of [EVIL, `${APP}.evil.example.net`, 'null', APP.replace('https', 'http')]) {
      const res = await stack.api.get('/v1/account', { headers: { ...ws.auth, Origin: origin } });
      expect({ origin, status: res.status, allow: res.headers['access-control-allow-origin'] }).toEqual({
        origin,
        status: 200,
        allow: undefined,
      });
      expect(listOf(res.headers.vary)).toContain('origin');
    }
  });

  it('leaves an OPTIONS that is not a preflight to the API (405)', async () => {
    const res = await request(stack.app).options('/v1/jobs').set('Origin', APP);
    expect(res.status).toBe(405);
    expect(res.body.detail.error).toBe('method_not_allowed');
  });
});

describe('without CORS_ORIGINS', () => {
  it('allows no origin', async () => {
    const config = loadConfig({ ...process.env, CORS_ORIGINS: '' });
    expect(config.corsOrigins).toEqual([]);
    const app = createApp({
      services: { ...stack.runtime.services, config: { ...stack.config, corsOrigins: config.corsOrigins } },
      registry: stack.runtime.registry,
      limiter: new RedisRateLimiter(stack.runtime.redis, stack.config.redisPrefix),
      redis: stack.runtime.redis,
    });
    const pre = await preflight(app, APP);
    expect([pre.status, pre.headers['access-control-allow-origin']]).toEqual([405, undefined]);
    const res = await request(app).get('/v1/account').set(ws.auth).set('Origin', APP);
    expect([res.status, res.headers['access-control-allow-origin']]).toEqual([200, undefined]);
  });
});

describe('CORS_ORIGINS', () => {
  it('takes a comma list of origins, trimmed, without trailing slash, lower case', () => {
    expect(corsOrigins(' https://App.example.com/ ,http://localhost:5173,,https://app.example.com')).toEqual([
      'https://app.example.com',
      'http://localhost:5173',
    ]);
    expect(corsOrigins(undefined)).toEqual([]);
  });

  it.each(['*', 'https://app.example.com/path', 'app.example.com', 'ftp://files.example.com', 'https://*.example.com'])(
    'refuses %s',
    (value) => {
      expect(() => corsOrigins(value)).toThrow(/CORS_ORIGINS/);
    },
  );
});
