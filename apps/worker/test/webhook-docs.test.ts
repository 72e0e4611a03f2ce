import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestStack, type TestStack } from '@sdx/testing';
import { signatureHeaders } from '@sdx/webhooks';

/**
 * The receiver of docs/webhooks.md, run as the page says (`node receiver.js`, plain Node, no
 * dependency): it verifies a real job.completed of the service and the test send, and refuses a
 * message whose body was altered.
 */
const ROOT = path.resolve(__dirname, '../../..');
let stack: TestStack;
let receiver: ChildProcess | null = null;
let output = '';

beforeAll(async () => {
  stack = await startTestStack({ withWorker: true, env: { WEBHOOK_ALLOW_HTTP: '1', WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1' } });
});
afterAll(async () => {
  receiver?.kill('SIGKILL');
  await stack.close();
});

function snippet(): string {
  const page = readFileSync(path.join(ROOT, 'docs/webhooks.md'), 'utf8');
  const match = /<!-- snippet: receiver -->\n```js\n([\s\S]*?)```/.exec(page);
  if (!match) throw new Error('docs/webhooks.md has no receiver snippet');
  return match[1];
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function until(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not seen in time; receiver output:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

it('verifies the service’s messages with the snippet of docs/webhooks.md', async () => {
  const ws = await stack.workspace({ credits: 1000 });
  const port = await freePort();
  const hook = await stack.api.post('/v1/webhooks', {
    headers: ws.auth,
    body: { url: `http://127.0.0.1:${port}/`, events: ['job.completed'] },
  });
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'sdx-receiver-')), 'receiver.js');
  writeFileSync(file, snippet());
  receiver = spawn(process.execPath, [file], {
    env: { PATH: process.env.PATH, WEBHOOK_SECRET: hook.body.secret, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  receiver.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  receiver.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  await until(() => output.includes('listening'));

  const job = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'instagram', operation: 'profile', target: 'natgeo' },
  });
  await until(() => new RegExp(`verified job\\.completed evt_\\w+ ${job.body.id}`).test(output));
  await stack.api.post(`/v1/webhooks/${hook.body.id}/test`, { headers: ws.auth });
  await until(() => new RegExp(`verified webhook\\.test evt_\\w+ ${hook.body.id}`).test(output));

  // A message whose body is not the one signed is refused.
  const [event] = await stack.runtime.db
    .selectFrom('webhook_events')
    .select(['id', 'body'])
    .where('type', '=', 'job.completed')
    .where('workspace_id', '=', ws.workspaceId)
    .execute();
  const timestamp = Math.floor(Date.now() / 1000);
  const headers = signatureHeaders([hook.body.secret], event.id, timestamp, event.body!);
  const tampered = await fetch(`http://127.0.0.1:${port}/`, {
    method: 'POST',
    headers,
    body: event.body!.replace('"completed"', '"failed"'),
  });
  expect(tampered.status).toBe(400);
  const genuine = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers, body: event.body! });
  expect(genuine.status).toBe(204);
});
