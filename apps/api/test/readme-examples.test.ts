import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { eventually, listen, type SeededWorkspace, startTestStack, type TestStack } from '@sdx/testing';

/**
 * The README's quick start, as a new user types it: each command of its curl block in turn
 * against a started service (an API on a real port and a worker), `localhost:3000` the
 * service's address, KEY the demo key, <job_id> the job the block itself started. Polling and
 * listing stay small however large the job (include_result=false); the data comes from
 * /items and the export.
 */

const run = promisify(execFile);
const README = path.resolve(__dirname, '../../../README.md');

/** The commands of the first ```sh block after `marker`, continuation lines joined. */
export function commandsAfter(markdown: string, marker: string): string[] {
  const from = markdown.indexOf(marker);
  expect(from).toBeGreaterThanOrEqual(0);
  const block = /```sh\n([\s\S]*?)```/.exec(markdown.slice(from))![1];
  return block
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .filter((line) => line.trim() !== '');
}

let stack: TestStack;
let ws: SeededWorkspace;
let server: Server;
let url: string;
let workdir: string;

beforeAll(async () => {
  stack = await startTestStack({ withWorker: true });
  ws = await stack.workspace({ credits: 100_000, rateLimitPerMinute: 100_000 });
  ({ server, url } = await listen(stack.app));
  workdir = mkdtempSync(path.join(tmpdir(), 'sdx-readme-'));
}, 60_000);
afterAll(async () => {
  if (workdir) rmSync(workdir, { recursive: true, force: true });
  if (server) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  await stack?.close();
});

it('runs the quick start: polling and listing a 25,000-follower job stay small, the data comes from /items and the export', async () => {
  const commands = commandsAfter(readFileSync(README, 'utf8'), 'prints its API key once:');
  const host = url.replace(/^http:\/\//, '');
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: workdir, KEY: ws.apiKey };
  let jobId = '';
  const outputs = new Map<string, string>();
  for (const command of commands) {
    if (command.startsWith('export KEY=')) continue; // the key npm start printed: KEY is set
    if (command.includes('<job_id>')) {
      expect(jobId).not.toBe('');
      // The reader polls until the job has completed; so does the test, before going on.
      await eventually(
        async () =>
          (await stack.runtime.db.selectFrom('jobs').select('status').where('id', '=', jobId).executeTakeFirstOrThrow()).status ===
          'completed',
        90_000,
        200,
      );
    }
    const script = command.replaceAll('localhost:3000', host).replaceAll('<job_id>', jobId);
    const { stdout } = await run('bash', ['-e', '-c', script], { cwd: workdir, env, timeout: 60_000, maxBuffer: 256 * 1024 * 1024 });
    outputs.set(command, stdout);
    if (/-d '\{"platform":"twitter","operation":"followers"/.test(command)) jobId = (JSON.parse(stdout) as { id: string }).id;
  }
  const output = (fragment: string) => {
    const found = [...outputs.entries()].find(([command]) => command.includes(fragment));
    expect(found).toBeDefined();
    return found![1];
  };
  expect(jobId).toMatch(/^job_/);
  const poll = output(`/v1/jobs/<job_id>?include_result=false`);
  expect(JSON.parse(poll)).toMatchObject({ id: jobId, status: 'completed', result_count: 25_000, result: null });
  expect(poll.length).toBeLessThan(4_000);
  const list = output('/v1/jobs?limit=25&include_result=false');
  expect(list).toMatch(/HTTP\/1\.1 200/);
  expect(list.length).toBeLessThan(16_000);
  expect(list).toContain(`"id":"${jobId}"`);
  expect(list).toContain('"result":null');
  const items = JSON.parse(output('/items?limit=1000')) as { items: unknown[]; next_cursor: string | null };
  expect(items.items).toHaveLength(1_000);
  expect(items.next_cursor).toBeTruthy();
  expect(readFileSync(path.join(workdir, 'followers.csv'), 'utf8').trim().split('\n')).toHaveLength(25_001);
  expect(statSync(path.join(workdir, 'followers.csv')).size).toBeGreaterThan(100_000);
}, 150_000);

it('runs "Mail on a laptop": the reset mail is in the local outbox, newest first, with its link', async () => {
  const commands = commandsAfter(readFileSync(README, 'utf8'), '### Mail on a laptop');
  expect(commands).toHaveLength(3);
  const host = url.replace(/^http:\/\//, '');
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: workdir };
  const outputs: string[] = [];
  for (const command of commands) {
    if (command.includes('/v1/dev/mail')) {
      await eventually(async () => {
        const res = await stack.api.get('/v1/dev/mail');
        return (res.body as Array<{ to: string }>).some((mail) => mail.to === 'lin@example.com') || undefined;
      }, 20_000);
    }
    outputs.push(
      (await run('bash', ['-e', '-c', command.replaceAll('localhost:3000', host)], { cwd: workdir, env, timeout: 30_000 })).stdout,
    );
  }
  expect(JSON.parse(outputs[0]).user.email).toBe('lin@example.com');
  const mails = JSON.parse(outputs[2]) as Array<{ to: string; subject: string; text: string }>;
  expect(mails[0]).toMatchObject({ to: 'lin@example.com', subject: expect.stringMatching(/reset/i) });
  expect(mails[0].text).toMatch(/\/console\/reset\?token=/);
}, 60_000);

it('gives /docs a Clients section (CLI, TypeScript, Python, MCP) installing from the tarballs, and names no unscoped package', async () => {
  const { loadOpenApiDocument } = await import('@sdx/contract');
  const description = loadOpenApiDocument().info.description ?? '';
  const clients = /## Clients\n([\s\S]*?)\n## /.exec(description)?.[1] ?? '';
  for (const client of ['**CLI**', '**TypeScript SDK**', '**Python SDK**', '**MCP**']) expect(clients).toContain(client);
  expect(clients).toContain('npm pack --pack-destination /tmp');
  expect(clients).toContain('npm install /tmp/sdx-sdk-1.0.0.tgz');
  expect(clients).toContain('pip install ./clients/python');
  // The only `npx sdx` is the warning against it.
  expect(clients.match(/npx sdx/g)).toHaveLength(1);
  expect(clients).toContain('never `npx sdx`');
  // The page serves the same document.
  const json = await stack.api.get('/openapi.json');
  expect(json.body.info.description).toContain('## Clients');
});
