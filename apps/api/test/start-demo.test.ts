import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import path from 'node:path';
import { createTestDatabase, eventually } from '@sdx/testing';

/** First `npm start` on an empty database: a demo workspace with its key, owned by a demo user with a password printed once. */
const ROOT = path.resolve(__dirname, '../../..');

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

let child: ChildProcess | null = null;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  if (child?.pid && child.exitCode === null) {
    process.kill(-child.pid, 'SIGTERM');
    await new Promise((resolve) => child!.once('exit', resolve));
  }
  await database.drop();
});

it('creates the demo user, owner of the demo workspace, and prints its password beside the demo key', async () => {
  const port = await freePort();
  child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts', 'start.ts')], {
    cwd: ROOT,
    detached: true,
    env: {
      ...process.env,
      DATABASE_URL: database.url,
      PORT: String(port),
      REDIS_PREFIX: `sdxstart${randomBytes(3).toString('hex')}`,
      LOG_LEVEL: 'silent',
      NODE_ENV: 'development',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (chunk) => (out += chunk.toString()));
  const password = await eventually(() => /Password \(shown once, keep it\): (\S+)/.exec(out)?.[1], 40_000);
  const apiKey = /API key \(shown once, keep it\): (\S+)/.exec(out)![1];
  expect(out).toContain('demo@example.com');
  const base = `http://127.0.0.1:${port}`;
  const login = await eventually(
    async () => {
      const res = await fetch(`${base}/v1/auth/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ email: 'demo@example.com', password }),
      });
      return res.status === 200 ? res : undefined;
    },
    // The API opens its port once its Postgres and Redis answer: on a loaded machine, a while.
    90_000,
    200,
  );
  const body = (await login.json()) as {
    workspaces: Array<{ id: string; name: string; kind: string; role: string }>;
    default_workspace_id: string | null;
  };
  const account = (await (await fetch(`${base}/v1/account`, { headers: { 'X-API-Key': apiKey } })).json()) as {
    organization_id: string;
    role: string;
  };
  expect(account.role).toBe('owner');
  expect(body.workspaces).toEqual([
    { id: expect.any(String), name: 'Personal', kind: 'personal', role: 'owner', require_two_factor: false },
    { id: account.organization_id, name: 'Demo workspace', kind: 'team', role: 'owner', require_two_factor: false },
  ]);
  // The console opens the demo workspace after sign-in, and the session says so as well.
  expect(body.default_workspace_id).toBe(account.organization_id);
  const cookie = login.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const session = (await (await fetch(`${base}/v1/auth/session`, { headers: { cookie } })).json()) as {
    default_workspace_id: string | null;
  };
  expect(session.default_workspace_id).toBe(account.organization_id);
  const wrong = await fetch(`${base}/v1/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email: 'demo@example.com', password: 'not-the-password' }),
  });
  expect(wrong.status).toBe(401);
  // Output piped, not a terminal: still one "Ready" line once the API answers.
  await eventually(() => out.includes(`Ready in `) || undefined, 40_000, 200);
  expect(out).toMatch(
    new RegExp(
      `^Ready in [\\d.]+ s: http://localhost:${port} \\(console http://localhost:${port}/console, API reference http://localhost:${port}/docs\\)$`,
      'm',
    ),
  );
  expect(out.match(/^Ready in /gm)).toHaveLength(1);
}, 150_000);

it('on a second start, prints no key but says how to get one again', async () => {
  if (child?.pid && child.exitCode === null) {
    process.kill(-child.pid, 'SIGTERM');
    await new Promise((resolve) => child!.once('exit', resolve));
  }
  const port = await freePort();
  child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts', 'start.ts')], {
    cwd: ROOT,
    detached: true,
    env: {
      ...process.env,
      DATABASE_URL: database.url,
      PORT: String(port),
      REDIS_PREFIX: `sdxstart${randomBytes(3).toString('hex')}`,
      LOG_LEVEL: 'silent',
      NODE_ENV: 'development',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (chunk) => (out += chunk.toString()));
  await eventually(() => out.includes('Ready in ') || undefined, 60_000, 200);
  expect(out).not.toContain('API key (shown once');
  expect(out).toContain('the demo API key and password were shown on the first start only');
  expect(out).toContain('npm run -s admin -- create-key --workspace <ws_id>');
  expect(out).toContain('npm run -s admin -- reset-password demo@example.com');
}, 120_000);
