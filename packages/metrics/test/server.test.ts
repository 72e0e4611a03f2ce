import { createServer } from 'node:net';
import IORedis from 'ioredis';
import pg from 'pg';
import { baseDatabaseUrl, testRedisUrl } from '@sdx/testing';
import { jobsFinished, recordJobFinished, startMetricsServer, type MetricsServer } from '../src';

/** The operations port of the worker and scheduler, against the real Postgres and Redis. */

/** A port with nothing listening on it: a dependency that does not answer. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let pool: pg.Pool;
let redis: IORedis;
let deadPool: pg.Pool;
let server: MetricsServer;
let degraded: MetricsServer;
const url = (s: MetricsServer, path: string) => `http://127.0.0.1:${s.port}${path}`;

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: baseDatabaseUrl(), max: 2 });
  redis = new IORedis(testRedisUrl(), { maxRetriesPerRequest: 1 });
  deadPool = new pg.Pool({ connectionString: `postgres://postgres@127.0.0.1:${await closedPort()}/postgres`, max: 1 });
  deadPool.on('error', () => undefined);
  const postgres = () => pool.query('select 1');
  server = await startMetricsServer({ port: 0, host: '127.0.0.1', checks: { postgres, redis: () => redis.ping() } });
  degraded = await startMetricsServer({
    port: 0,
    host: '127.0.0.1',
    checks: { postgres: () => deadPool.query('select 1'), redis: () => redis.ping() },
    checkTimeoutMs: 500,
  });
});

afterAll(async () => {
  await server.close();
  await degraded.close();
  redis.disconnect();
  await deadPool.end();
  await pool.end();
});

describe('metrics server', () => {
  it('serves the registry on /metrics in the Prometheus format', async () => {
    recordJobFinished('instagram', 'profile', 'completed');
    const res = await fetch(url(server, '/metrics'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    const value = (await jobsFinished.get()).values.find(
      (v) => v.labels.platform === 'instagram' && v.labels.status === 'completed',
    )!.value;
    expect(text).toContain(`sdx_jobs_finished_total{platform="instagram",operation="profile",status="completed"} ${value}`);
  });

  it('answers /healthz while up, and /readyz 200 when Postgres and Redis answer', async () => {
    const health = await fetch(url(server, '/healthz'));
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await fetch(url(server, '/readyz'));
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ok', checks: { postgres: 'ok', redis: 'ok' } });
  });

  it('answers /readyz 503 naming the dependency that does not answer, and stays alive', async () => {
    const ready = await fetch(url(degraded, '/readyz'));
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: 'error', checks: { postgres: 'error', redis: 'ok' } });
    expect((await fetch(url(degraded, '/healthz'))).status).toBe(200);
  });

  it('answers JSON 404 and 405 for anything else', async () => {
    const missing = await fetch(url(server, '/v1/jobs'));
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ detail: { error: 'not_found', message: 'No route for GET /v1/jobs.' } });
    const post = await fetch(url(server, '/metrics'), { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect(await post.json()).toMatchObject({ detail: { error: 'method_not_allowed' } });
  });

  it('is not ready once draining, while its dependencies still answer', async () => {
    const own = await startMetricsServer({ port: 0, host: '127.0.0.1', checks: { redis: () => redis.ping() } });
    try {
      expect((await fetch(url(own, '/readyz'))).status).toBe(200);
      own.drain();
      const ready = await fetch(url(own, '/readyz'));
      expect(ready.status).toBe(503);
      expect(await ready.json()).toEqual({ status: 'draining', checks: { redis: 'ok' } });
      expect((await fetch(url(own, '/healthz'))).status).toBe(200);
    } finally {
      await own.close();
    }
  });
});
