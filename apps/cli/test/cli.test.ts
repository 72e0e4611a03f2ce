import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { countWorkspaceRows, type SeededWorkspace, type ServedStack, startServedStack, type TestStack, waitForJob } from '@sdx/testing';
import { json, sdx, useBuiltSdx } from './support';

/** `sdx` as a child process against the real service: its main flows, their --json output and exit codes. */

let stack: TestStack;
let served: ServedStack;
let baseUrl: string;
let home: string;
beforeAll(async () => {
  served = await startServedStack({ withWorker: true });
  ({ stack, url: baseUrl } = served);
  home = mkdtempSync(path.join(tmpdir(), 'sdx-cli-'));
  await useBuiltSdx();
});
afterAll(async () => {
  await served.close();
  rmSync(home, { recursive: true, force: true });
});

let ws: SeededWorkspace;
let env: Record<string, string>;
beforeEach(async () => {
  ws = await stack.workspace({ credits: 100_000 });
  env = { SDX_BASE_URL: baseUrl, SDX_API_KEY: ws.apiKey, XDG_CONFIG_HOME: path.join(home, 'config') };
});

it('logs in from stdin into a 0600 config file, which SDX_API_KEY and SDX_BASE_URL override', async () => {
  const config = { XDG_CONFIG_HOME: path.join(home, 'login') };
  const login = json(await sdx(['login', '--base-url', baseUrl, '--json'], { env: config, input: `${ws.apiKey}\n` }));
  expect(login).toMatchObject({ base_url: baseUrl, workspace_id: ws.workspaceId, key_id: ws.keyId });
  const file = path.join(home, 'login', 'sdx', 'config.json');
  expect(login.config_path).toBe(file);
  expect(statSync(file).mode & 0o777).toBe(0o600);
  expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
  expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ api_key: ws.apiKey, base_url: baseUrl });

  expect(json(await sdx(['account', '--json'], { env: config })).authenticated_key_id).toBe(ws.keyId);
  const other = await stack.workspace();
  expect(json(await sdx(['account', '--json'], { env: { ...config, SDX_API_KEY: other.apiKey } })).organization_id).toBe(other.workspaceId);
  const unreachable = await sdx(['account', '--json'], { env: { ...config, SDX_BASE_URL: 'http://127.0.0.1:9' } });
  expect(unreachable.code).toBe(4);
  expect(JSON.parse(unreachable.stderr)).toMatchObject({ error: 'connection' });

  // A login that cannot reach the service says where it looked and how to point it elsewhere.
  const nowhere = await sdx(['login'], { env: { ...config, SDX_BASE_URL: 'http://127.0.0.1:9' }, input: `${ws.apiKey}\n` });
  expect(nowhere.code).toBe(4);
  expect(nowhere.stderr).toContain('could not reach http://127.0.0.1:9');
  expect(nowhere.stderr).toContain('--base-url');
  expect(JSON.parse(readFileSync(file, 'utf8')).api_key).toBe(ws.apiKey);

  const refused = await sdx(['login', '--base-url', baseUrl], { env: config, input: 'sdx_live_notakey\n' });
  expect(refused.code).toBe(3);
  expect(refused.stderr).toContain('invalid_api_key');
  expect(JSON.parse(readFileSync(file, 'utf8')).api_key).toBe(ws.apiKey);

  expect(json(await sdx(['logout', '--json'], { env: config }))).toEqual({ config_path: file, removed: true });
  const noKey = await sdx(['account'], { env: config });
  expect(noKey.code).toBe(2);
  expect(noKey.stderr).toContain('sdx login');
});

it('creates a job and waits for it, then exports it as csv', async () => {
  const job = json(await sdx(['jobs', 'create', 'twitter', 'followers', 'nasa', '--limit', '2500', '--wait', '--json'], { env }));
  expect(job).toMatchObject({
    status: 'completed',
    result_count: 2500,
    progress_current: 2500,
    platform: 'twitter',
    operation: 'followers',
  });

  const file = path.join(home, `${job.id}.csv`);
  const exported = json(await sdx(['export', job.id, '--format', 'csv', '-o', file, '--json'], { env }));
  const lines = readFileSync(file, 'utf8').trim().split('\n');
  expect(lines).toHaveLength(2501);
  expect(exported).toMatchObject({ id: job.id, format: 'csv', file, bytes: statSync(file).size });

  expect(json(await sdx(['jobs', 'get', job.id, '--json'], { env })).id).toBe(job.id);
  const listed = json<Array<{ id: string }>>(await sdx(['jobs', 'list', '--limit', '5', '--json'], { env }));
  expect(listed.map((j) => j.id)).toEqual([job.id]);
  const quiet = await sdx(['jobs', 'list', '-q'], { env });
  expect(quiet.stdout.trim()).toBe(job.id);
});

it('extracts at once, and prints aligned tables without colour off a terminal', async () => {
  const job = json(await sdx(['extract', 'instagram', 'profile', 'natgeo', '--json'], { env }));
  expect(job).toMatchObject({ status: 'completed', result_count: 1 });

  const table = await sdx(['jobs', 'list'], { env });
  expect(table.code).toBe(0);
  expect(table.stdout).not.toMatch(/\u001b\[/);
  const [header, row] = table.stdout.trimEnd().split('\n');
  expect(header).toMatch(/^ID +STATUS +PLATFORM +OPERATION +TARGET +RESULTS +CREDITS +CREATED$/);
  expect(row.indexOf('completed')).toBe(header.indexOf('STATUS'));
  expect(row.indexOf('instagram')).toBe(header.indexOf('PLATFORM'));

  const platforms = json<Array<{ platform: string }>>(await sdx(['platforms', '--json'], { env: { SDX_BASE_URL: baseUrl } }));
  expect(platforms).toHaveLength(5);
  expect((await sdx(['platforms'], { env: { SDX_BASE_URL: baseUrl } })).stdout).toMatch(
    /^PLATFORM +OPERATION +DEFAULT +MAX +PRICE\ninstagram +profile +1 +1 +1 \/ result\n/,
  );
});

it('runs a batch from a targets file, and cancels', async () => {
  const targets = path.join(home, 'targets.txt');
  writeFileSync(targets, 'natgeo\n# a comment\nnasa\n\n');
  const batch = json(
    await sdx(['batches', 'create', 'instagram', 'posts', '--targets-file', targets, '--limit', '3', '--wait', '--json'], { env }),
  );
  expect(batch).toMatchObject({ status: 'completed', target_count: 2, completed_count: 2, result_count: 6 });
  expect(json(await sdx(['batches', 'list', '--json'], { env }))[0].id).toBe(batch.id);

  const slow = json(await sdx(['jobs', 'create', 'instagram', 'profile', 'sandbox_slow_5000_cli', '--json'], { env }));
  expect(json(await sdx(['jobs', 'cancel', slow.id, '--json'], { env })).cancel_requested_at).not.toBeNull();
});

it('manages schedules, quotes, usage and keys', async () => {
  const created = json(
    await sdx(
      [
        'schedules',
        'create',
        'instagram',
        'posts',
        '--name',
        'Daily',
        '--target',
        'natgeo',
        '--target',
        'nasa',
        '--frequency',
        'daily',
        '--timezone',
        'UTC',
        '--starts-at',
        '2030-01-01T08:00:00Z',
        '--limit',
        '5',
        '--json',
      ],
      { env },
    ),
  );
  expect(created).toMatchObject({ name: 'Daily', targets: ['natgeo', 'nasa'], status: 'active' });
  expect(json(await sdx(['schedules', 'pause', created.id, '--json'], { env })).status).toBe('paused');
  expect(json(await sdx(['schedules', 'resume', created.id, '--json'], { env })).status).toBe('active');
  expect(json(await sdx(['schedules', 'run', created.id, '--json'], { env })).runs[0]).toMatchObject({
    trigger: 'manual',
    batch_id: expect.stringMatching(/^bat_/),
  });
  expect(json(await sdx(['schedules', 'list', '--json'], { env })).map((s: { id: string }) => s.id)).toEqual([created.id]);
  const preview = json(
    await sdx(
      [
        'schedules',
        'preview',
        '--frequency',
        'weekly',
        '--timezone',
        'UTC',
        '--starts-at',
        '2030-01-01T08:00:00Z',
        '--count',
        '2',
        '--json',
      ],
      { env },
    ),
  );
  expect(preview.runs).toHaveLength(2);

  expect(json(await sdx(['quote', 'twitter', 'followers', 'nasa', 'esa', '--limit', '100', '--json'], { env }))).toMatchObject({
    target_count: 2,
    max_credits: 400,
    affordable: true,
  });
  expect(json(await sdx(['usage', '--json'], { env }))).toMatchObject({ credit_limit: 100_000 });
  expect(json(await sdx(['usage', '--daily', '--days', '2', '--json'], { env }))).toHaveLength(2);

  const key = json(await sdx(['keys', 'create', '--name', 'ci', '--role', 'viewer', '--json'], { env }));
  expect(key.api_key).toMatch(/^sdx_live_/);
  expect(json(await sdx(['keys', 'list', '--json'], { env })).map((k: { id: string }) => k.id)).toContain(key.id);
  expect(json(await sdx(['keys', 'revoke', key.id, '--json'], { env }))).toEqual({ id: key.id, revoked: true });
  expect((await sdx(['account'], { env: { ...env, SDX_API_KEY: key.api_key } })).code).toBe(3);
});

it('exits 2 on bad usage, 3 on an API error, 5 when the waited job fails', async () => {
  const usage = await sdx(['jobs', 'create', 'instagram', 'posts', 'natgeo', '--limit', 'lots'], { env });
  expect(usage.code).toBe(2);
  expect(usage.stderr).toContain("'lots' is invalid");
  expect((await sdx(['frobnicate'], { env })).code).toBe(2);

  const missing = await sdx(['jobs', 'get', 'job_missing', '--json'], { env });
  expect(missing.code).toBe(3);
  expect(missing.stdout).toBe('');
  expect(JSON.parse(missing.stderr)).toMatchObject({ error: 'job_not_found', status: 404, request_id: expect.any(String) });

  const failed = await sdx(['jobs', 'create', 'instagram', 'profile', 'sandbox_not_found', '--wait', '--json'], { env });
  expect(failed.code).toBe(5);
  expect(JSON.parse(failed.stdout)).toMatchObject({ status: 'failed', error: { code: 'target_not_found' } });
  expect(await countWorkspaceRows(stack, 'jobs', ws.workspaceId)).toBe(1);
});

it('Ctrl-C during --wait stops waiting without cancelling the job, says so, and exits 130', async () => {
  const running = sdx(['jobs', 'create', 'instagram', 'profile', 'sandbox_slow_2000_ctrlc', '--wait'], { env });
  const announced = await new Promise<string>((resolve) => {
    running.child.stderr!.on('data', (chunk: Buffer) => {
      const id = /(job_\w+) (queued|running)/.exec(chunk.toString())?.[1];
      if (id) resolve(id);
    });
  });
  // `sdx` is waiting (it listens for Ctrl-C before it prints the job) and the job runs.
  await waitForJob(stack, ws.auth, announced, (job) => job.status === 'running');
  running.child.kill('SIGINT');
  const ran = await running;
  expect(ran.code).toBe(130);
  const id = announced;
  expect(ran.stderr).toContain(`${id} was not cancelled`);
  expect(ran.stderr).toContain(`sdx jobs wait ${id}`);
  const final = await waitForJob(stack, ws.auth, id, (job) => job.status !== 'queued' && job.status !== 'running');
  expect(final).toMatchObject({ status: 'completed', cancel_requested_at: null });
});
