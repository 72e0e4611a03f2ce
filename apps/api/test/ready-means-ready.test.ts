import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { createDb } from '@sdx/db';
import { createApiKey, createWorkspace, systemClock } from '@sdx/domain/testing';
import { createTestDatabase, eventually, freePort, type PrivateRedis, startPrivateRedis, TEST_SECRETS_KEY } from '@sdx/testing';

/**
 * Ready means ready: an API and a worker started while their Redis is not up yet open no port and
 * say nothing of being ready (`api listening`, `worker started`) until it answers; the first
 * rate-limited request sent the moment the API says it listens is served, never 503
 * rate_limiter_unavailable.
 */
const ROOT = path.resolve(__dirname, '../../..');

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let redis: PrivateRedis;
const children: ChildProcess[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  redis = await startPrivateRedis();
});

afterAll(async () => {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
  }
  await redis.destroy();
  await database.drop();
});

function start(app: 'api' | 'worker', env: Record<string, string>): { child: ChildProcess; lines: string[] } {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'apps', app, 'src', 'main.ts')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const lines: string[] = [];
  let rest = '';
  const take = (chunk: Buffer) => {
    rest += chunk.toString();
    const parts = rest.split('\n');
    rest = parts.pop() ?? '';
    lines.push(...parts);
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  return { child, lines };
}

const said = (lines: string[], msg: string) => lines.some((line) => line.includes(`"msg":"${msg}"`));

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

it('says it is ready, and opens its port, only once Redis answers; the first rate-limited request is served', async () => {
  const db = createDb({ connectionString: database.url, max: 1 });
  const apiKey = await db.transaction().execute(async (tx) => {
    const workspace = await createWorkspace(tx, systemClock, { name: 'Ready', credits: 1000 });
    return (await createApiKey(tx, workspace.id, 'ready')).api_key;
  });
  await db.destroy();

  // Redis is down when the processes start, and comes up a while after.
  await redis.stop();
  const port = await freePort();
  const env = {
    NODE_ENV: 'production',
    SECRETS_KEY: TEST_SECRETS_KEY,
    PROVIDER_MODE: 'sandbox',
    DATABASE_URL: database.url,
    REDIS_URL: redis.url,
    REDIS_PREFIX: `ready${randomBytes(3).toString('hex')}`,
    LOG_LEVEL: 'info',
  };
  const api = start('api', { ...env, PORT: String(port) });
  const worker = start('worker', { ...env, METRICS_PORT: String(await freePort()) });

  // Both reach their wait and say, after a few seconds of it, what they wait for.
  const waiting = 'waiting for postgres and redis before reporting ready';
  await eventually(() => (said(api.lines, waiting) && said(worker.lines, waiting)) || undefined, 60_000, 100);
  expect(api.child.exitCode).toBeNull();
  expect(worker.child.exitCode).toBeNull();
  expect(said(api.lines, 'api listening')).toBe(false);
  expect(said(worker.lines, 'worker started')).toBe(false);
  expect(await accepts(port)).toBe(false);

  await redis.start();
  await eventually(() => said(api.lines, 'api listening') || undefined, 60_000, 20);
  // The load balancer's first request, the moment the process says it listens.
  const first = await fetch(`http://127.0.0.1:${port}/v1/account`, { headers: { 'X-API-Key': apiKey } });
  expect(first.status).toBe(200);
  expect(first.headers.get('ratelimit-limit')).not.toBeNull();
  const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
  expect(await ready.json()).toEqual({ status: 'ok', checks: { postgres: 'ok', redis: 'ok' } });
  await eventually(() => said(worker.lines, 'worker started') || undefined, 60_000, 50);
}, 150_000);
