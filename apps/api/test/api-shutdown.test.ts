import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { createResponseValidator, TEST_SECRETS_KEY } from '@sdx/testing';
import { eventually, startTestStack, type TestStack } from '@sdx/testing';

const ROOT = path.resolve(__dirname, '../../..');

let stack: TestStack;
beforeAll(async () => {
  // No worker: a job stays queued, so POST /v1/extract waits for the whole sync timeout.
  stack = await startTestStack();
});
afterAll(async () => {
  await stack.close();
});

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

it('on SIGTERM the API answers POST /v1/extract waits with 202 and the job at once, then exits 0', async () => {
  const ws = await stack.workspace({ credits: 10_000 });
  const port = await freePort();
  const api = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'apps', 'api', 'src', 'main.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      SECRETS_KEY: TEST_SECRETS_KEY,
      PROVIDER_MODE: 'sandbox',
      DATABASE_URL: stack.databaseUrl,
      REDIS_URL: stack.config.redisUrl,
      REDIS_PREFIX: stack.config.redisPrefix,
      PORT: String(port),
      LOG_LEVEL: 'info',
      SYNC_TIMEOUT_MS: '60000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  for (const stream of [api.stdout, api.stderr]) createInterface({ input: stream }).on('line', (l) => lines.push(l));
  const exited = new Promise<number | null>((resolve) => api.once('exit', (code) => resolve(code)));
  try {
    await eventually(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 30_000, 100);
    const waits = [1, 2, 3].map((i) =>
      fetch(`http://127.0.0.1:${port}/v1/extract`, {
        method: 'POST',
        headers: { ...ws.auth, 'Content-Type': 'application/json' },
        body: JSON.stringify({ platform: 'instagram', operation: 'profile', target: `drain_${i}` }),
      }),
    );
    // All three are waiting (their jobs exist and are queued) before the signal.
    await eventually(
      async () => {
        const n = await stack.runtime.db
          .selectFrom('jobs')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('workspace_id', '=', ws.workspaceId)
          .executeTakeFirstOrThrow();
        return Number(n.n) === 3;
      },
      10_000,
      50,
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    const signalledAt = Date.now();
    api.kill('SIGTERM');
    const replies = await Promise.all(waits);
    const answeredIn = Date.now() - signalledAt;
    const validator = createResponseValidator();
    for (const reply of replies) {
      expect(reply.status).toBe(202);
      const job = (await reply.json()) as { id: string; status: string };
      expect(job.status).toBe('queued');
      validator.validate('POST', '/v1/extract', reply.status, job, reply.headers.get('content-type') ?? undefined);
    }
    expect(answeredIn).toBeLessThan(2000);
    expect(await exited).toBe(0);
    expect(Date.now() - signalledAt).toBeLessThan(5000);
    expect(lines.some((l) => l.includes('"api shutting down"'))).toBe(true);
  } finally {
    if (api.exitCode === null) api.kill('SIGKILL');
  }
}, 60_000);
