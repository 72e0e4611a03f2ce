import { Writable } from 'node:stream';
import net from 'node:net';
import request from 'supertest';
import { createApiServer, createApp } from '@sdx/app-api';
import { createLogger, loadConfig } from '@sdx/config';
import { createResponseValidator } from '@sdx/testing';
import { createRuntime } from '@sdx/runtime';
import { countWorkspaceRows, listen, untilRedisReady, type SeededWorkspace, startTestStack, type TestStack } from '@sdx/testing';

let stack: TestStack;
let ws: SeededWorkspace;
beforeAll(async () => {
  stack = await startTestStack();
  ws = await stack.workspace({ credits: 100_000 });
});
afterAll(async () => {
  await stack.close();
});

const contract = createResponseValidator();
const jobBody = { platform: 'instagram', operation: 'profile', target: 'natgeo' };

describe('text Postgres cannot store answers 422, never 500', () => {
  it.each([
    ['GET', '/v1/jobs/%00'],
    ['POST', '/v1/jobs/job_%00/cancel'],
    ['GET', '/v1/jobs/%00/export'],
    ['GET', '/v1/batches/%00'],
    ['POST', '/v1/batches/%00/cancel'],
    ['GET', '/v1/batches/%00/export'],
    ['GET', '/v1/schedules/%00'],
    ['PUT', '/v1/schedules/%00'],
    ['DELETE', '/v1/schedules/%00'],
    ['POST', '/v1/schedules/%00/pause'],
    ['POST', '/v1/schedules/%00/resume'],
    ['POST', '/v1/schedules/%00/run'],
  ])('a NUL in the ID of %s %s', async (method, path) => {
    const res = await stack.api.call(method.toLowerCase() as 'get', path, { headers: ws.auth });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['path', expect.stringMatching(/_id$/)], type: 'string_unstorable' });
  });

  it('a NUL or an unpaired surrogate in a body string or key, e.g. a schedule name', async () => {
    const schedule = {
      name: 'a\u0000b',
      operation: 'profile',
      targets: ['natgeo'],
      frequency: 'daily',
      timezone: 'UTC',
      starts_at: '2030-01-01T00:00:00Z',
    };
    const named = await stack.api.post('/v1/schedules', { headers: ws.auth, body: schedule });
    expect(named.status).toBe(422);
    expect(named.body.detail).toEqual([{ loc: ['body', 'name'], msg: expect.any(String), type: 'string_unstorable', input: 'a\u0000b' }]);
    const surrogate = await stack.api.post('/v1/schedules', {
      headers: ws.auth,
      raw: JSON.stringify({ ...schedule, name: 'ok' }).replace('"ok"', '"a\\ud800"'),
    });
    expect(surrogate.status).toBe(422);
    expect(surrogate.body.detail[0].loc).toEqual(['body', 'name']);
    const key = await stack.api.post('/v1/jobs', {
      headers: ws.auth,
      raw: '{"platform":"instagram","operation":"profile","target":"natgeo","x\\u0000":1}',
    });
    expect(key.status).toBe(422);
    const target = await stack.api.post('/v1/batches', {
      headers: ws.auth,
      body: { ...jobBody, target: undefined, targets: ['natgeo', 'na\u0000sa'] },
    });
    expect(target.status).toBe(422);
    expect(target.body.detail[0].loc).toEqual(['body', 'targets', 1]);
    expect(await countWorkspaceRows(stack, 'jobs', ws.workspaceId)).toBe(0);
  });

  it('a NUL in a query value or name', async () => {
    for (const url of ['/v1/jobs?limit=%00', '/v1/jobs/job_x/export?format=js%00n', '/v1/jobs?a%00=1']) {
      const res = await stack.api.get(url, { headers: ws.auth });
      expect(res.status).toBe(422);
    }
  });
});

it('an unknown body key that looks like broken percent-encoding is named as sent', async () => {
  const res = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { ...jobBody, 'x%q': 1 } });
  expect(res.status).toBe(422);
  expect(res.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'x%q'], type: 'extra_forbidden' })]);
});

describe('integers in queries are strict decimal', () => {
  it.each(['Infinity', '1e309', '1e1', '5%20', '%205', '0x10', '1.0', '+5', '', '99999999999999999999999'])(
    'limit=%s answers 422',
    async (value) => {
      const res = await stack.api.get(`/v1/jobs?limit=${value}`, { headers: ws.auth });
      expect(res.status).toBe(422);
      expect(res.body.detail[0].loc).toEqual(['query', 'limit']);
    },
  );

  it('plain digits pass, and the bounds still apply', async () => {
    expect((await stack.api.get('/v1/jobs?limit=5', { headers: ws.auth })).status).toBe(200);
    expect((await stack.api.get('/v1/schedules?limit=100', { headers: ws.auth })).status).toBe(200);
    expect((await stack.api.get('/v1/batches?limit=0', { headers: ws.auth })).body.detail[0].type).toBe('greater_than_equal');
    expect((await stack.api.get('/v1/jobs?limit=5&limit=6', { headers: ws.auth })).status).toBe(422);
  });
});

describe('JSON bodies are bounded in depth and size', () => {
  it('nesting deeper than 32 levels answers a JSON 422, not an HTML page', async () => {
    for (const raw of [
      '['.repeat(100_000) + ']'.repeat(100_000),
      '{"a":'.repeat(5000) + '1' + '}'.repeat(5000),
      JSON.stringify({ ...jobBody, x: JSON.parse('['.repeat(33) + ']'.repeat(33)) }),
    ]) {
      const res = await stack.api.post('/v1/jobs', { headers: ws.auth, raw });
      expect(res.status).toBe(422);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body.detail).toEqual([
        { loc: ['body'], msg: 'JSON nesting is deeper than 32 levels', type: 'json_too_deep', ctx: { max_depth: 32 } },
      ]);
    }
  });

  it('32 levels are parsed (and refused by the schema as usual); brackets inside strings do not count', async () => {
    const deep = JSON.parse('['.repeat(31) + ']'.repeat(31));
    const res = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { ...jobBody, x: deep } });
    expect(res.status).toBe(422);
    expect(res.body.detail[0].type).toBe('extra_forbidden');
    const stringy = await stack.api.post('/v1/jobs', {
      headers: ws.auth,
      body: { ...jobBody, target: '['.repeat(40) + '\\"{'.repeat(40) },
    });
    expect(stringy.status).toBe(422);
    expect(stringy.body.detail.error).toBe('invalid_target');
  });

  it('a body over 1 MiB answers a JSON 413', async () => {
    const res = await stack.api.post('/v1/jobs', {
      headers: ws.auth,
      raw: JSON.stringify({ ...jobBody, target: 'a'.repeat(1024 * 1024) }),
    });
    expect(res.status).toBe(413);
    expect(res.body.detail).toEqual({ error: 'invalid_request', message: 'Request body too large: at most 1048576 bytes.' });
  });

  it('a body on an operation that takes none is not parsed', async () => {
    const res = await request(stack.app).get('/v1/account').set(ws.auth).set('Content-Type', 'application/json').send('['.repeat(100_000));
    expect(res.status).toBe(200);
  });
});

describe('the probes and the catalog document their 422', () => {
  it.each(['/healthz?x=1', '/readyz?x=1', '/v1/platforms?x=1'])('%s', async (url) => {
    const res = await stack.api.get(url);
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['query', 'x'] });
  });
});

describe('requests Node refuses before any route still get JSON', () => {
  async function raw(text: string): Promise<string> {
    const server = createApiServer(stack.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    try {
      return await new Promise<string>((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
        let out = '';
        socket.on('data', (chunk) => (out += chunk.toString('latin1')));
        socket.on('end', () => resolve(out));
        socket.on('error', reject);
      });
    } finally {
      server.close();
    }
  }

  it('a NUL in a header value: 400 with a JSON body', async () => {
    const out = await raw('GET /v1/account HTTP/1.1\r\nHost: x\r\nX-Workspace-ID: a\u0000b\r\n\r\n');
    expect(out).toMatch(/^HTTP\/1\.1 400 /);
    expect(out).toContain('Content-Type: application/json');
    expect(JSON.parse(out.slice(out.indexOf('\r\n\r\n') + 4)).detail.error).toBe('invalid_request');
  });

  it('headers over the size limit: 431 with a JSON body', async () => {
    const out = await raw(`GET /v1/account HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(out).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(out.slice(out.indexOf('\r\n\r\n') + 4)).detail.error).toBe('invalid_request');
  });
});

describe('logs', () => {
  function capture(): { lines: LogLine[]; stream: Writable } {
    const lines: LogLine[] = [];
    const stream = new Writable({
      write(chunk, _enc, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    return { lines, stream };
  }

  it('redact a key sent as ?api_key= or in any auth-like header', async () => {
    const { lines, stream } = capture();
    const log = createLogger({ logLevel: 'info' }, {}, stream);
    const app = createApp({
      services: { ...stack.runtime.services, log },
      registry: stack.runtime.registry,
      limiter: { consume: () => Promise.resolve({ allowed: true, limit: 1, remaining: 1, resetMs: 1 }) },
      redis: stack.runtime.redis,
    });
    await request(app)
      .get(`/v1/account?api_key=${ws.apiKey}&token=t0ken&limit=3`)
      .set('Proxy-Authorization', `Bearer ${ws.apiKey}`)
      .set('X-Upstream-Token', 'abc123')
      .set('X-API-Key', ws.apiKey);
    await request(app).get('/v1/account').set('Authorization', `Bearer ${ws.apiKey}`).set('Cookie', 'session=s3cret');
    const text = JSON.stringify(lines);
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(text).not.toContain(ws.apiKey);
    expect(text).not.toContain('t0ken');
    expect(text).not.toContain('abc123');
    expect(text).not.toContain('s3cret');
    const first = lines.find((l) => l.msg === 'request completed')!;
    expect(first.req?.url).toBe('/v1/account?api_key=[Redacted]&token=[Redacted]&limit=3');
    expect(first.req?.headers['proxy-authorization']).toBe('[Redacted]');
  });
});

/** A JSON line of the service's log (the fields these tests read). */
interface LogLine {
  level: number;
  msg: string;
  req?: { url: string; headers: Record<string, string> };
  [key: string]: unknown;
}

describe('Postgres unreachable', () => {
  it('answers 503 service_unavailable with Retry-After, logs the outage once, and the process lives on', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const lines: LogLine[] = [];
    const log = createLogger(
      { logLevel: 'info' },
      {},
      new Writable({
        write(chunk, _e, done) {
          for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l));
          done();
        },
      }),
    );
    const config = loadConfig({
      NODE_ENV: 'test',
      DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/nowhere`,
      REDIS_URL: stack.config.redisUrl,
      REDIS_PREFIX: stack.config.redisPrefix,
    });
    const runtime = createRuntime(config, { name: 'test', log, providers: [] });
    await untilRedisReady(runtime);
    const app = createApp({
      services: runtime.services,
      registry: runtime.registry,
      limiter: { consume: () => Promise.resolve({ allowed: true, limit: 1, remaining: 1, resetMs: 1 }) },
      redis: runtime.redis,
    });
    const { server, url } = await listen(app);
    try {
      for (let i = 0; i < 5; i += 1) {
        const res = await fetch(`${url}/v1/jobs`, {
          method: 'POST',
          headers: { ...ws.auth, 'Content-Type': 'application/json' },
          body: JSON.stringify(jobBody),
        });
        expect(res.status).toBe(503);
        expect(res.headers.get('retry-after')).toBe('2');
        const body = (await res.json()) as { detail: { error: string } };
        expect(body.detail.error).toBe('service_unavailable');
        contract.validate('POST', '/v1/jobs', res.status, body, res.headers.get('content-type') ?? undefined);
      }
      const listed = await fetch(`${url}/v1/jobs/job_x`, { headers: ws.auth });
      expect(listed.status).toBe(503);
      const warnings = lines.filter((l) => l.level >= 40);
      expect(warnings).toEqual([
        expect.objectContaining({
          dependency: 'postgres',
          outage: 'started',
          fault: expect.objectContaining({ code: 'ECONNREFUSED' }),
          msg: 'postgres unavailable',
        }),
      ]);
      expect(JSON.stringify(lines)).not.toMatch(/\\n\s+at /);
    } finally {
      server.close();
      await runtime.close();
    }
  });
});
