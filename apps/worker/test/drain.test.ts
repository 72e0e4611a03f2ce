import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { parse } from 'yaml';
import { startTestStack, type TestStack, TEST_SECRETS_KEY } from '@sdx/testing';
import { buildProcesses } from '../../../scripts/build';

/**
 * The drain of a worker as `docker stop` (or a pod's termination) does it: the built worker runs
 * as the container runs it (compose's command, NODE_ENV=production), jobs are running in it,
 * and it receives SIGTERM. The running jobs must finish or be handed back before it exits, well
 * inside its stop grace period, and none may be left `running` for the heartbeat timeout to
 * recover: that timeout is set far beyond the test here, so only the drain can settle them.
 */

const ROOT = path.resolve(__dirname, '..', '..', '..');
const OUT = path.join(ROOT, 'dist', `drain-test-${process.pid}`);
/** compose's stop_grace_period of the worker is 25 s; its own grace (onShutdown) is 15 s. */
const GRACE_MS = 15_000;
const HEARTBEAT_TIMEOUT_MS = 600_000;
const CONCURRENCY = 4;

let stack: TestStack;
let child: ChildProcess | undefined;

/** The worker's command in docker-compose.yml: the test runs exactly that. */
function composeCommand(): string[] {
  const compose = parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as { services: Record<string, { command: string[] }> };
  return compose.services.worker.command;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  stack = await startTestStack({ env: { HEARTBEAT_TIMEOUT_MS: String(HEARTBEAT_TIMEOUT_MS) } });
  const { problems } = await buildProcesses(OUT);
  expect(problems).toEqual([]);
});

afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(OUT, { recursive: true, force: true });
  await stack.close();
});

describe('worker drain on SIGTERM', () => {
  it('finishes or hands back every running job before it exits, without the heartbeat timeout', async () => {
    const [command, script] = composeCommand();
    expect(command).toBe('node');
    const metricsPort = await freePort();
    const output: string[] = [];
    child = spawn(process.execPath, [path.join(OUT, path.basename(script))], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'production',
        SECRETS_KEY: TEST_SECRETS_KEY,
        PROVIDER_MODE: 'sandbox',
        DATABASE_URL: stack.databaseUrl,
        REDIS_URL: stack.config.redisUrl,
        REDIS_PREFIX: stack.config.redisPrefix,
        WORKER_CONCURRENCY: String(CONCURRENCY),
        // 6 pages of 1000 followers, 400 ms each: a job runs about 2.5 s.
        SANDBOX_LATENCY_MS: '400',
        HEARTBEAT_INTERVAL_MS: '200',
        HEARTBEAT_TIMEOUT_MS: String(HEARTBEAT_TIMEOUT_MS),
        METRICS_PORT: String(metricsPort),
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk) => output.push(String(chunk)));
    child.stderr!.on('data', (chunk) => output.push(String(chunk)));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child!.once('exit', (code, signal) => resolve({ code, signal })),
    );
    await until('the worker to be ready', async () => ((await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).ok ? true : undefined));

    const ws = await stack.workspace({ credits: 100_000 });
    const ids: string[] = [];
    for (let i = 0; i < CONCURRENCY * 2; i++) {
      const res = await stack.api.post('/v1/jobs', {
        headers: ws.auth,
        body: { platform: 'twitter', operation: 'followers', target: `drain_${i}`, limit: 6000 },
      });
      expect(res.status).toBe(202);
      ids.push(res.body.id as string);
    }
    const statuses = async () => {
      const rows = await stack.runtime.db
        .selectFrom('jobs')
        .select(['id', 'status', 'heartbeat_at', 'lease_token'])
        .where('id', 'in', ids)
        .execute();
      return new Map(rows.map((row) => [row.id, row]));
    };
    // Every slot busy with a job that has written at least one page.
    const running = await until('jobs running in every slot', async () => {
      const now = await statuses();
      const busy = [...now.values()].filter((row) => row.status === 'running');
      const pages = await stack.runtime.db.selectFrom('job_result_pages').select('job_id').distinct().where('job_id', 'in', ids).execute();
      return busy.length === CONCURRENCY && pages.length >= CONCURRENCY ? busy.map((row) => row.id) : undefined;
    });

    const signalled = Date.now();
    // What docker stop does: SIGTERM to the container's process (tini forwards it to node).
    process.kill(child.pid!, 'SIGTERM');
    // Probed once the process has taken the signal (its first shutdown line), not before.
    await until('the worker took the signal', () => Promise.resolve(output.join('').includes('worker shutting down') ? true : undefined));
    const draining = await fetch(`http://127.0.0.1:${metricsPort}/readyz`)
      .then((r) => r.status)
      .catch(() => 'closed');
    const exit = await exited;
    const drainMs = Date.now() - signalled;

    expect({ exit, log: exit.code === 0 ? '' : output.join('') }).toEqual({ exit: { code: 0, signal: null }, log: '' });
    expect(drainMs).toBeLessThan(GRACE_MS);
    expect([503, 'closed']).toContain(draining);
    expect(output.join('')).toContain('worker shutting down');

    const after = await statuses();
    for (const id of running) {
      const row = after.get(id)!;
      // Finished during the drain, or back in the queue for another worker: never left running.
      expect({ id, status: ['completed', 'queued'].includes(row.status) ? 'settled' : row.status }).toEqual({ id, status: 'settled' });
    }
    expect([...after.values()].filter((row) => row.status === 'running')).toEqual([]);

    // Another worker takes over what is left at once: nothing waits for a heartbeat timeout.
    const took = Date.now();
    stack.startWorker(CONCURRENCY);
    await until(
      'every job completed',
      async () => ([...(await statuses()).values()].every((row) => row.status === 'completed') ? true : undefined),
      30_000,
    );
    expect(Date.now() - took).toBeLessThan(30_000);
  }, 90_000);
});
