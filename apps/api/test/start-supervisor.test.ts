import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { createTestDatabase, eventually, testRedisUrl, TEST_SECRETS_KEY } from '@sdx/testing';
import { nextRestartDelay } from '../../../scripts/start';

const ROOT = path.resolve(__dirname, '../../..');
const run = promisify(execFile);

describe('the restart backoff', () => {
  it('starts at 0.5 s, doubles while a child keeps dying young, caps at 30 s, and resets after a healthy minute', () => {
    const delays: number[] = [];
    let previous = 0;
    for (let i = 0; i < 9; i += 1) delays.push((previous = nextRestartDelay(previous, 1_000)));
    expect(delays).toEqual([500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
    expect(nextRestartDelay(30_000, 60_000)).toBe(500);
  });
});

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function childrenOf(pid: number): Promise<Map<string, number>> {
  const { stdout } = await run('ps', ['-o', 'pid=', '--ppid', String(pid)]).catch(() => ({ stdout: '' }));
  const byApp = new Map<string, number>();
  for (const child of stdout
    .split('\n')
    .map((l) => Number(l.trim()))
    .filter(Boolean)) {
    const cmd = readFileSync(`/proc/${child}/cmdline`, 'utf8');
    const app = /apps\/(api|worker|scheduler)\/src\/main\.ts/.exec(cmd)?.[1];
    if (app) byApp.set(app, child);
  }
  return byApp;
}

describe('npm start', () => {
  let supervisor: ChildProcess | null = null;
  let drop: (() => Promise<void>) | null = null;
  afterAll(async () => {
    if (supervisor && supervisor.exitCode === null) supervisor.kill('SIGKILL');
    await drop?.();
  });

  it('restarts a child that exits unexpectedly, with the others serving meanwhile, and stops cleanly on SIGTERM', async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    const port = await freePort();
    supervisor = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts', 'start.ts')], {
      cwd: ROOT,
      env: {
        ...process.env,
        NODE_ENV: 'production',
        SECRETS_KEY: TEST_SECRETS_KEY,
        PROVIDER_MODE: 'sandbox',
        DATABASE_URL: database.url,
        REDIS_URL: testRedisUrl(),
        REDIS_PREFIX: `sdxt${port}`,
        PORT: String(port),
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: string[] = [];
    for (const stream of [supervisor.stdout!, supervisor.stderr!]) createInterface({ input: stream }).on('line', (l) => lines.push(l));
    const pid = supervisor.pid!;
    const first = await eventually(
      async () => {
        const children = await childrenOf(pid);
        return children.size === 3 && (await fetch(`http://127.0.0.1:${port}/healthz`)).ok ? children : null;
      },
      60_000,
      200,
    );

    process.kill(first.get('worker')!, 'SIGKILL');
    const restarted = await eventually(
      async () => {
        const children = await childrenOf(pid);
        const worker = children.get('worker');
        return worker && worker !== first.get('worker') ? children : null;
      },
      30_000,
      100,
    );
    expect(restarted.get('api')).toBe(first.get('api'));
    expect(restarted.get('scheduler')).toBe(first.get('scheduler'));
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    const notice = lines
      .map((l) => {
        try {
          return JSON.parse(l) as Record<string, unknown>;
        } catch {
          return null;
        }
      })
      .find((r) => r?.msg === 'worker exited unexpectedly; restarting');
    expect(notice).toMatchObject({ app: 'worker', exit: 'SIGKILL', restarts: 1, restartInMs: 500 });

    const exited = new Promise<number | null>((resolve) => supervisor!.once('exit', (code) => resolve(code)));
    supervisor.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect((await childrenOf(pid)).size).toBe(0);
  }, 120_000);
});
