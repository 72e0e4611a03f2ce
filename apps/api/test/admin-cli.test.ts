import { execFile } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { createDb } from '@sdx/db';
import { runAdmin, startTestStack, type TestStack } from '@sdx/testing';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../../..');

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack.close();
});

/** The CLI as built for production (dist/admin.js); the first test runs it as documented, through npm. */
async function admin(...args: string[]): Promise<string> {
  const { stdout } = await runAdmin(args, { ...process.env, DATABASE_URL: stack.databaseUrl, LOG_LEVEL: 'silent' });
  return stdout;
}

async function npmRunAdmin(...args: string[]): Promise<string> {
  const { stdout } = await run('npm', ['run', '-s', 'admin', '--', ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: stack.databaseUrl, LOG_LEVEL: 'silent' },
  });
  return stdout;
}

it('creates a workspace and keys, grants credits and revokes keys, as decisions.md specifies', async () => {
  const out = await npmRunAdmin(
    'create-workspace',
    '--name',
    'Acme',
    '--credits',
    '1234',
    '--rate-limit',
    '77',
    '--max-active-jobs',
    '9',
    '--max-result-limit',
    '500',
    '--json',
  );
  const lines = out.trim().split('\n');
  expect(lines).toHaveLength(1);
  const created = JSON.parse(lines[0]);
  expect(Object.keys(created).sort()).toEqual(['api_key', 'key_id', 'workspace_id']);
  expect(created.api_key).toMatch(/^sdx_live_[0-9A-Za-z]{32,}$/);
  expect(created.workspace_id).toMatch(/^ws_/);
  expect(created.key_id).toMatch(/^key_/);

  const auth = { 'X-API-Key': created.api_key };
  const account = await stack.api.get('/v1/account', { headers: auth });
  expect(account.body).toMatchObject({
    organization_id: created.workspace_id,
    organization_name: 'Acme',
    monthly_quota: 1234,
    rate_limit_per_minute: 77,
    max_active_jobs: 9,
    max_result_limit: 500,
  });
  const usage = await stack.api.get('/v1/usage/current', { headers: auth });
  expect(usage.body).toMatchObject({ credit_limit: 1234, credits_remaining: 1234 });

  const second = JSON.parse((await admin('create-key', '--workspace', created.workspace_id, '--json')).trim());
  expect(Object.keys(second).sort()).toEqual(['api_key', 'key_id']);
  expect((await stack.api.get('/v1/account', { headers: { 'X-API-Key': second.api_key } })).body.authenticated_key_id).toBe(second.key_id);

  await admin('grant-credits', '--workspace', created.workspace_id, '--credits', '100');
  const granted = await stack.api.get('/v1/usage/current', { headers: auth });
  expect(granted.body).toMatchObject({ purchased_credits: 100, lifetime_purchased: 100, credits_remaining: 1334 });

  await admin('revoke-key', '--key-id', created.key_id);
  expect((await stack.api.get('/v1/account', { headers: auth })).status).toBe(401);
  expect((await stack.api.get('/v1/account', { headers: { 'X-API-Key': second.api_key } })).status).toBe(200);
});

it('fails clearly on bad arguments', async () => {
  await expect(admin('create-workspace', '--json')).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('--name') });
  await expect(admin('revoke-key', '--key-id', 'key_missing')).rejects.toMatchObject({ code: 2 });
});

it('lists workspaces and keys (--json) so an operator can replace a lost key; its keys are owners; its changes are audited', async () => {
  const created = JSON.parse((await admin('create-workspace', '--name', 'Lost keys', '--json')).trim());
  const signup = await stack.api.post('/v1/auth/signup', {
    body: { email: 'operator.test@example.com', password: 'long enough password' },
  });
  expect(signup.status).toBe(201);

  const workspaces = JSON.parse((await admin('list-workspaces', '--json')).trim());
  const listed = workspaces.find((w: { id: string }) => w.id === created.workspace_id);
  expect(listed).toEqual({
    id: created.workspace_id,
    name: 'Lost keys',
    kind: 'team',
    created_at: expect.any(String),
    owners: [],
    member_count: 0,
    active_key_count: 1,
  });
  const personal = workspaces.find((w: { id: string }) => w.id === signup.body.workspaces[0].id);
  expect(personal).toMatchObject({ kind: 'personal', owners: ['operator.test@example.com'], member_count: 1, active_key_count: 0 });
  expect(await admin('list-workspaces')).toContain(created.workspace_id);

  const replacement = JSON.parse((await admin('create-key', '--workspace', created.workspace_id, '--json')).trim());
  await admin('revoke-key', '--key-id', created.key_id);
  const keys = JSON.parse((await admin('list-keys', '--workspace', created.workspace_id, '--json')).trim());
  expect(
    keys.map((k: { id: string; role: string; revoked_at: string | null; prefix: string }) => [
      k.id,
      k.role,
      k.revoked_at !== null,
      k.prefix.length,
    ]),
  ).toEqual([
    [replacement.key_id, 'owner', false, 12],
    [created.key_id, 'owner', true, 12],
  ]);
  expect(JSON.stringify(keys)).not.toContain(replacement.api_key);
  expect(await admin('list-keys', '--workspace', created.workspace_id)).toContain(replacement.key_id);
  await expect(admin('list-keys', '--workspace', 'ws_nosuch', '--json')).rejects.toMatchObject({ code: 2 });

  const account = await stack.api.get('/v1/account', { headers: { 'X-API-Key': replacement.api_key } });
  expect(account.body.role).toBe('owner');
  await admin('grant-credits', '--workspace', created.workspace_id, '--credits', '50');
  const audit = await stack.api.get('/v1/audit-events', { headers: { 'X-API-Key': replacement.api_key } });
  expect(audit.body.map((e: { action: string; actor: object }) => [e.action, e.actor])).toEqual([
    ['credits.granted', { type: 'system', id: 'admin-cli' }],
    ['api_key.revoked', { type: 'system', id: 'admin-cli' }],
    ['api_key.created', { type: 'system', id: 'admin-cli' }],
    ['api_key.created', { type: 'system', id: 'admin-cli' }],
    ['workspace.created', { type: 'system', id: 'admin-cli' }],
  ]);
  expect(audit.body[0].data).toEqual({ credits: 50, kind: 'purchased', expires_at: null });
  // Ten CLI runs, each a Node start: room for a loaded machine.
}, 180_000);

describe('refuses a database it cannot work on, and says why', () => {
  async function adminAt(databaseUrl: string, ...args: string[]) {
    return runAdmin(args, { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' });
  }
  const withDatabase = (name: string) => {
    const url = new URL(stack.databaseUrl);
    url.pathname = `/${name}`;
    return url.toString();
  };
  async function databaseExists(name: string): Promise<boolean> {
    const found = await sql<{ n: number }>`select count(*)::int as n from pg_database where datname = ${name}`.execute(stack.runtime.db);
    return found.rows[0].n > 0;
  }

  it('a database that does not exist: exit 3, and it is not created', async () => {
    const name = `sdx_absent_${Date.now().toString(36)}`;
    await expect(adminAt(withDatabase(name), 'create-workspace', '--name', 'X', '--json')).rejects.toMatchObject({
      code: 3,
      stderr: expect.stringMatching(new RegExp(`database .*${name}.* does not exist`)),
    });
    expect(await databaseExists(name)).toBe(false);
  });

  it('a database that is not migrated: exit 3 naming the pending migrations, and nothing is migrated', async () => {
    const name = `sdx_empty_${Date.now().toString(36)}`;
    await sql.raw(`create database ${name}`).execute(stack.runtime.db);
    try {
      await expect(adminAt(withDatabase(name), 'create-workspace', '--name', 'X', '--json')).rejects.toMatchObject({
        code: 3,
        stderr: expect.stringMatching(/is not migrated \(\d+ pending: 20261122_0001_initial.*\); run `npm run migrate` first/),
      });
      const db = createDb({ connectionString: withDatabase(name), max: 1 });
      try {
        const tables = await sql<{
          n: number;
        }>`select count(*)::int as n from information_schema.tables where table_schema = 'public'`.execute(db);
        expect(tables.rows[0].n).toBe(0);
      } finally {
        await db.destroy();
      }
    } finally {
      await sql.raw(`drop database if exists ${name} with (force)`).execute(stack.runtime.db);
    }
  });

  it('an unreachable Postgres: exit 3 saying it cannot reach it, without the password', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const failure = adminAt(`postgres://postgres:hunter2@127.0.0.1:${port}/social_data`, 'create-key', '--workspace', 'ws_x');
    await expect(failure).rejects.toMatchObject({
      code: 3,
      stderr: expect.stringContaining(`cannot reach the database postgres://postgres@127.0.0.1:${port}/social_data`),
    });
    await expect(failure).rejects.toMatchObject({ stderr: expect.not.stringContaining('hunter2') });
  });
});
