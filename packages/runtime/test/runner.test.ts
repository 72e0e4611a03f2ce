import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { createLogger, loadConfig } from '@sdx/config';
import { backgroundRuns } from '@sdx/metrics';
import { BackgroundRunner, createRuntime, periodic, type PeriodicTask, type Runtime, wakeOverRedis } from '@sdx/runtime';
import { createTestDb, eventually, testRedisUrl } from '@sdx/testing';

/**
 * The one runner of background work (packages/runtime/src/background/runner.ts), on the real
 * Postgres and Redis: passes on their interval, a clean stop, a failure logged and retried per
 * the task's policy, a leased task run by one of two processes, draining and wakes over Redis.
 */
let database: Awaited<ReturnType<typeof createTestDb>>;
const prefix = `sdxt${randomBytes(4).toString('hex')}`;
const logged: { msg?: string; task?: string; failures?: number; retryInMs?: number; err?: string }[] = [];
const runtimes: Runtime[] = [];

beforeAll(async () => {
  database = await createTestDb();
});
afterAll(async () => {
  await Promise.all(runtimes.map((r) => r.close()));
  await database.drop();
});

/** A process of the service on the test database (all of them under one Redis prefix, as one deployment). */
function startProcess(): Runtime {
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: database.url,
    REDIS_URL: testRedisUrl(),
    REDIS_PREFIX: prefix,
    LOG_LEVEL: 'warn',
  });
  const log = createLogger(
    { logLevel: 'warn', logFormat: 'json' },
    { name: 'test' },
    { write: (line: string) => void logged.push(JSON.parse(line) as (typeof logged)[number]) },
  );
  const runtime = createRuntime(config, { name: 'test', providers: [], log });
  runtimes.push(runtime);
  return runtime;
}

function runner(runtime: Runtime, task: PeriodicTask, options: { remoteWakes?: boolean } = {}): BackgroundRunner {
  return new BackgroundRunner({
    tasks: [task],
    context: { services: runtime.services, redisUrl: runtime.config.redisUrl },
    redis: runtime.redis,
    ...options,
  }).start();
}

async function runsOf(task: string): Promise<Record<string, number>> {
  const { values } = await backgroundRuns.get();
  return Object.fromEntries(values.filter((v) => v.labels.task === task).map((v) => [String(v.labels.outcome), v.value]));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it('runs a task on its interval, moved by its jitter, and stops cleanly after the pass in progress', async () => {
  const runtime = startProcess();
  const starts: number[] = [];
  let ended = 0;
  const task = periodic({
    name: 'test-interval',
    processes: ['worker'],
    runs: 'a query',
    everyMs: () => 50,
    cadence: '50 ms',
    jitter: 0.2,
    retry: { firstMs: null, doubling: false },
    async run({ services }) {
      starts.push(Date.now());
      await sql`select pg_sleep(0.02)`.execute(services.db);
      ended += 1;
    },
  });
  const running = runner(runtime, task);
  expect(running.running).toEqual(['test-interval']);
  await sleep(700);
  expect(starts.length).toBeGreaterThanOrEqual(6);
  expect(starts.length).toBeLessThanOrEqual(20);
  // Each wait is 50 ms ± 20 %, counted from the end of the pass before.
  const gaps = starts.slice(1).map((at, i) => at - starts[i]);
  expect(Math.min(...gaps)).toBeGreaterThanOrEqual(55);
  await eventually(() => starts.length > ended, 2_000, 1);
  await running.stop();
  expect(ended).toBe(starts.length);
  const after = starts.length;
  await sleep(200);
  expect(starts.length).toBe(after);
  expect((await runsOf('test-interval')).ok).toBe(after);
});

it('logs a failed pass and retries it per its policy: after 40 ms, doubling, then on its interval again', async () => {
  const runtime = startProcess();
  const starts: number[] = [];
  const task = periodic({
    name: 'test-retry',
    processes: ['worker'],
    runs: 'a failing query',
    everyMs: () => 60_000,
    cadence: '1 min',
    jitter: 0,
    retry: { firstMs: 40, doubling: true },
    async run({ services }) {
      starts.push(Date.now());
      if (starts.length <= 2) await sql`select 1 / 0`.execute(services.db);
    },
  });
  const running = runner(runtime, task);
  try {
    await eventually(() => starts.length >= 3, 5_000, 5);
    await sleep(300);
  } finally {
    await running.stop();
  }
  // Two failures, retried 40 then 80 ms later; the third pass succeeds and the next waits a minute.
  expect(starts).toHaveLength(3);
  expect(starts[1] - starts[0]).toBeGreaterThanOrEqual(38);
  expect(starts[2] - starts[1]).toBeGreaterThanOrEqual(78);
  expect(starts[2] - starts[1]).toBeLessThan(1_000);
  const failures = logged.filter((line) => line.task === 'test-retry');
  expect(failures.map((f) => [f.msg, f.failures, f.retryInMs, f.err])).toEqual([
    ['background task failed', 1, 40, 'division by zero'],
    ['background task failed', 2, 80, 'division by zero'],
  ]);
  expect(await runsOf('test-retry')).toEqual({ failed: 2, ok: 1 });
});

it('retries a task whose policy is the next interval on its interval', async () => {
  const runtime = startProcess();
  const starts: number[] = [];
  const task = periodic({
    name: 'test-next-interval',
    processes: ['worker'],
    runs: 'a failing query',
    everyMs: () => 150,
    cadence: '150 ms',
    jitter: 0,
    retry: { firstMs: null, doubling: false },
    async run({ services }) {
      starts.push(Date.now());
      await sql`select 1 / 0`.execute(services.db);
    },
  });
  const running = runner(runtime, task);
  try {
    await eventually(() => starts.length >= 3, 5_000, 5);
  } finally {
    await running.stop();
  }
  expect(Math.min(...starts.slice(1).map((at, i) => at - starts[i]))).toBeGreaterThanOrEqual(145);
  expect(logged.filter((line) => line.task === 'test-next-interval').map((f) => f.retryInMs)).toEqual(starts.map(() => 150));
});

it('runs a leased task in one of two processes, and in the other once the first stops', async () => {
  const [a, b] = [startProcess(), startProcess()];
  const ran = { a: 0, b: 0 };
  let inPass = 0;
  let overlapped = false;
  const task = (who: 'a' | 'b') =>
    periodic({
      name: 'test-leased',
      processes: ['worker'],
      runs: 'a query',
      everyMs: () => 30,
      cadence: '30 ms',
      jitter: 0.1,
      retry: { firstMs: null, doubling: false },
      lease: { ttlMs: () => 2_000, setting: '2 s' },
      async run({ services }) {
        inPass += 1;
        if (inPass > 1) overlapped = true;
        ran[who] += 1;
        await sql`select pg_sleep(0.01)`.execute(services.db);
        inPass -= 1;
      },
    });
  const first = runner(a, task('a'));
  await eventually(() => ran.a > 0, 5_000, 5);
  const second = runner(b, task('b'));
  try {
    await sleep(600);
    // The holder renews its own lease at each pass; the other skips every one of its turns.
    expect(ran.a).toBeGreaterThanOrEqual(5);
    expect(ran.b).toBe(0);
    expect((await runsOf('test-leased')).skipped).toBeGreaterThanOrEqual(5);
    expect(await a.redis.get(`${prefix}:lease:test-leased`)).not.toBeNull();
    // The holder stops and gives the lease up: the other process takes it at its next turn.
    await first.stop();
    const stoppedAt = ran.a;
    await eventually(() => ran.b >= 3, 5_000, 5);
    expect(ran.a).toBe(stoppedAt);
  } finally {
    await first.stop();
    await second.stop();
  }
  expect(overlapped).toBe(false);
  expect(await a.redis.get(`${prefix}:lease:test-leased`)).toBeNull();
});

it('drains pass after pass until one comes back short, and is woken over Redis from another process', async () => {
  const [worker, api] = [startProcess(), startProcess()];
  let passes = 0;
  let backlog = 0;
  const task = periodic({
    name: 'test-woken',
    processes: ['worker'],
    runs: 'a query',
    everyMs: () => 60_000,
    cadence: '1 min',
    jitter: 0,
    retry: { firstMs: null, doubling: false },
    drain: true,
    wakes: ['kick'],
    async run({ services }) {
      passes += 1;
      await sql`select 1`.execute(services.db);
      if (backlog === 0) return false;
      backlog -= 1;
      return backlog > 0;
    },
  });
  const running = runner(worker, task, { remoteWakes: true });
  try {
    await eventually(() => passes === 1, 5_000, 5);
    await running.idle('test-woken');
    // Three full batches waiting: the wake runs them back to back, and one short pass ends it.
    backlog = 3;
    const wake = wakeOverRedis(api.redis, prefix, 'test-woken');
    await eventually(
      () => {
        wake.kick();
        return backlog === 0;
      },
      5_000,
      50,
    );
    await running.idle('test-woken');
    expect(passes).toBeGreaterThanOrEqual(4);
    expect(passes).toBeLessThanOrEqual(6);
  } finally {
    await running.stop();
  }
});
