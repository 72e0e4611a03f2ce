import http from 'node:http';
import type { Server } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import express from 'express';
import type { KyselyPlugin } from 'kysely';
import { createApp, RedisRateLimiter } from '@sdx/app-api';
import { eventually, listen, type SeededWorkspace, startTestStack, type TestStack } from '@sdx/testing';
import { compressResponses } from '../src/middleware/compression';

/**
 * Responses over 1 KB are compressed when the client accepts gzip or br (extensions.md 7),
 * streamed results and exports included, which still go out as they are read; small responses,
 * clients that accept neither, and event streams are sent as they are.
 */

let stack: TestStack;
let ws: SeededWorkspace;
let server: Server;
let base: string;
let bigJobId: string;
let smallJobId: string;

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The bytes as they came over the wire. */
  body: Buffer;
  /** How many chunks the body came in. */
  chunks: number;
}

function get(url: string, headers: Record<string, string>, onFirstChunk?: () => void): Promise<Raw> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => {
          if (chunks.length === 0) onFirstChunk?.();
          chunks.push(chunk);
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), chunks: chunks.length }),
        );
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

function decoded(raw: Raw): string {
  const encoding = raw.headers['content-encoding'];
  if (encoding === 'gzip') return gunzipSync(raw.body).toString('utf8');
  if (encoding === 'br') return brotliDecompressSync(raw.body).toString('utf8');
  return raw.body.toString('utf8');
}

beforeAll(async () => {
  stack = await startTestStack({ withWorker: true });
  ws = await stack.workspace({ credits: 20_000, rateLimitPerMinute: 100_000 });
  const big = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'twitter', operation: 'followers', target: 'compressed', limit: 6_000 },
  });
  bigJobId = big.body.id;
  for (let i = 0; i < 10; i++) {
    const small = await stack.api.post('/v1/jobs', {
      headers: ws.auth,
      body: { platform: 'instagram', operation: 'profile', target: `compressed_${i}` },
    });
    smallJobId = small.body.id;
  }
  await eventually(async () => {
    const rows = await stack.runtime.db.selectFrom('jobs').select('status').where('workspace_id', '=', ws.workspaceId).execute();
    return rows.every((r) => r.status === 'completed');
  }, 60_000);
  ({ server, url: base } = await listen(stack.app));
}, 90_000);
afterAll(async () => {
  if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  await stack?.close();
});

describe('GET /v1/jobs', () => {
  const path = () => `${base}/v1/jobs?limit=25`;

  it('is compressed with gzip, and much smaller, when the client accepts it', async () => {
    const plain = await get(path(), ws.auth);
    const gzip = await get(path(), { ...ws.auth, 'Accept-Encoding': 'gzip' });
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(gzip.status).toBe(200);
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gzip.headers.vary).toMatch(/Accept-Encoding/);
    expect(gzip.headers['content-length']).toBeUndefined();
    const body = JSON.parse(decoded(gzip)) as Array<{ id: string; result: unknown[] }>;
    expect(body).toEqual(JSON.parse(plain.body.toString('utf8')));
    expect(body.find((job) => job.id === bigJobId)!.result).toHaveLength(6_000);
    // Six thousand followers and ten profiles: several times smaller over the wire.
    expect(gzip.body.length * 4).toBeLessThan(plain.body.length);
  });

  it('is compressed with br when the client prefers it', async () => {
    const br = await get(path(), { ...ws.auth, 'Accept-Encoding': 'br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect((JSON.parse(decoded(br)) as unknown[]).length).toBe(11);
  });

  it('is small with include_result=false, compressed or not', async () => {
    const small = await get(`${base}/v1/jobs?limit=25&include_result=false`, { ...ws.auth, 'Accept-Encoding': 'gzip, br' });
    expect(small.status).toBe(200);
    expect(JSON.parse(decoded(small))).toHaveLength(11);
    expect(small.body.length).toBeLessThan(10_000);
  });
});

it('sends responses under 1 KB as they are', async () => {
  const health = await get(`${base}/healthz`, { 'Accept-Encoding': 'gzip' });
  expect(health.status).toBe(200);
  expect(health.headers['content-encoding']).toBeUndefined();
  expect(JSON.parse(health.body.toString('utf8'))).toBeTruthy();
  const error = await get(`${base}/v1/jobs/job_unknown`, { ...ws.auth, 'Accept-Encoding': 'gzip' });
  expect(error.status).toBe(404);
  expect(error.headers['content-encoding']).toBeUndefined();
  expect(JSON.parse(error.body.toString('utf8')).detail.error).toBe('job_not_found');
});

it('sends a job read whole in one write with its length, and streams a large result', async () => {
  const small = await get(`${base}/v1/jobs/${smallJobId}`, ws.auth);
  expect(small.status).toBe(200);
  expect(small.headers['transfer-encoding']).toBeUndefined();
  expect(Number(small.headers['content-length'])).toBe(small.body.length);
  expect((JSON.parse(small.body.toString('utf8')) as { result: unknown[] }).result).toHaveLength(1);
  const big = await get(`${base}/v1/jobs/${bigJobId}`, ws.auth);
  expect(big.headers['transfer-encoding']).toBe('chunked');
  expect(big.headers['content-length']).toBeUndefined();
  expect((JSON.parse(big.body.toString('utf8')) as { result: unknown[] }).result).toHaveLength(6_000);
});

describe('exports', () => {
  it.each(['ndjson', 'csv', 'json'])('stream %s compressed, whole', async (format) => {
    const plain = await get(`${base}/v1/jobs/${bigJobId}/export?format=${format}`, ws.auth);
    const gzip = await get(`${base}/v1/jobs/${bigJobId}/export?format=${format}`, { ...ws.auth, 'Accept-Encoding': 'gzip' });
    expect(gzip.status).toBe(200);
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gzip.headers['transfer-encoding']).toBe('chunked');
    expect(gzip.headers['content-disposition']).toBe(plain.headers['content-disposition']);
    expect(decoded(gzip)).toBe(plain.body.toString('utf8'));
    expect(gzip.body.length * 3).toBeLessThan(plain.body.length);
  });

  it('leaves xlsx, a zip already, as it is', async () => {
    const xlsx = await get(`${base}/v1/jobs/${bigJobId}/export?format=xlsx`, { ...ws.auth, 'Accept-Encoding': 'gzip' });
    expect(xlsx.status).toBe(200);
    expect(xlsx.headers['content-encoding']).toBeUndefined();
  });

  it('sends compressed bytes while the result is still being read', async () => {
    // An API whose reads of result slices are counted.
    let reads = 0;
    const counting: KyselyPlugin = {
      transformQuery: (args) => args.node,
      transformResult: (args) => {
        reads += 1;
        return Promise.resolve(args.result);
      },
    };
    const app = createApp({
      services: { ...stack.runtime.services, db: stack.runtime.db.withPlugin(counting) },
      registry: stack.runtime.registry,
      limiter: new RedisRateLimiter(stack.runtime.redis, stack.config.redisPrefix),
      redis: stack.runtime.redis,
    });
    const own = await listen(app);
    try {
      let readsAtFirstChunk = -1;
      const gzip = await get(`${own.url}/v1/jobs/${bigJobId}/export?format=ndjson`, { ...ws.auth, 'Accept-Encoding': 'gzip' }, () => {
        readsAtFirstChunk = reads;
      });
      expect(gzip.headers['content-encoding']).toBe('gzip');
      expect(decoded(gzip).split('\n')).toHaveLength(6_001);
      // 6,000 items are read in 60 slices: the first compressed bytes left before most of them.
      expect(reads).toBeGreaterThan(60);
      expect(readsAtFirstChunk).toBeGreaterThan(0);
      expect(readsAtFirstChunk).toBeLessThan(reads / 2);
      expect(gzip.chunks).toBeGreaterThan(1);
    } finally {
      await new Promise<void>((resolve) => own.server.close(() => resolve()));
    }
  });
});

it('never compresses an event stream, whose events must reach the client as they are written', async () => {
  const app = express();
  app.use(compressResponses());
  let finish!: () => void;
  app.get('/events', (_req, res) => {
    res.setHeader('Content-Type', 'text/event-stream');
    res.write(`event: status\ndata: ${JSON.stringify({ padding: 'x'.repeat(4096) })}\n\n`);
    finish = () => res.end();
  });
  const { server: sse, url } = await listen(app as never);
  try {
    const first = await new Promise<{ headers: http.IncomingHttpHeaders; chunk: string }>((resolve, reject) => {
      http
        .get(`${url}/events`, { headers: { 'Accept-Encoding': 'gzip, br' } }, (res) => {
          res.once('data', (chunk: Buffer) => resolve({ headers: res.headers, chunk: chunk.toString('utf8') }));
          res.on('end', () => undefined);
          res.resume();
        })
        .on('error', reject);
    });
    // The first event arrived, plain, while the stream is still open.
    expect(first.headers['content-encoding']).toBeUndefined();
    expect(first.chunk.startsWith('event: status\ndata: ')).toBe(true);
  } finally {
    finish();
    await new Promise<void>((resolve) => sse.close(() => resolve()));
  }
});
