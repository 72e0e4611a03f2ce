import { startWorker, type RunningWorker } from '@sdx/app-worker';
import { createJob, type ReconcileReport, type Tenant } from '@sdx/domain/testing';
import { checkLedger, eventually, type PrivateRedis, startPrivateRedis, startTestStack, type TestStack } from '@sdx/testing';

/**
 * The fast subset of the fault drills (bench/drills), on a private redis-server this file
 * starts and stops (never the shared one): Redis restarted empty with a backlog queued, and
 * Redis stopped under load. The worker-SIGKILL drill's fast form is crash.test.ts.
 */

let redis: PrivateRedis;
let stack: TestStack;
const workers: RunningWorker[] = [];

beforeAll(async () => {
  redis = await startPrivateRedis();
  stack = await startTestStack({ env: { REDIS_URL: redis.url, RECONCILE_INTERVAL_MS: '60000' } });
}, 60_000);
afterAll(async () => {
  for (const worker of workers) await worker.close({ graceMs: 0 });
  stack.worker = null;
  await stack.close();
  await redis.destroy();
});

async function tenant(credits: number, maxActiveJobs: number): Promise<Tenant> {
  const ws = await stack.workspace({ credits, maxActiveJobs });
  return {
    workspace: await stack.runtime.db.selectFrom('workspaces').selectAll().where('id', '=', ws.workspaceId).executeTakeFirstOrThrow(),
    keyId: null,
    role: null,
  };
}

it('Redis restarted empty with 1,000 jobs queued: two workers re-queue them all within 10 s, none twice', async () => {
  const owner = await tenant(100_000, 5_000);
  for (let i = 0; i < 1_000; i += 250) {
    await Promise.all(
      Array.from({ length: 250 }, (_, k) =>
        createJob(
          stack.runtime.services,
          owner,
          { platform: 'instagram', operation: 'profile', target: `empty_${i + k}_sandbox_slow_30000` },
          { endpoint: 'POST /v1/jobs' },
        ),
      ),
    );
  }
  await stack.runtime.queues.idle();
  const reports: Array<{ worker: number; at: number; report: ReconcileReport }> = [];
  for (const n of [1, 2]) {
    workers.push(
      startWorker({
        services: stack.runtime.services,
        providers: stack.runtime.registry,
        redisUrl: redis.url,
        concurrency: 1,
        onReconciled: (report) => reports.push({ worker: n, at: Date.now(), report }),
      }),
    );
  }
  // The jobs are past the reconciler's grace (2 s) when Redis loses them.
  await new Promise((resolve) => setTimeout(resolve, 2_500));

  await redis.stop({ save: false });
  await redis.start();
  const restartedAt = Date.now();
  const queued = async () =>
    Number(
      (
        await stack.runtime.db
          .selectFrom('jobs')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('status', '=', 'queued')
          .executeTakeFirstOrThrow()
      ).n,
    );
  const backlog = await queued();
  await eventually(
    () => {
      const since = reports.filter((r) => r.at >= restartedAt);
      return since.reduce((n, r) => n + r.report.enqueued, 0) >= backlog;
    },
    10_000,
    20,
  );
  const elapsed = Date.now() - restartedAt;
  const taken = reports.filter((r) => r.at >= restartedAt).flatMap((r) => r.report.enqueuedIds);
  expect(new Set(taken).size).toBe(taken.length);
  expect(taken.length).toBe(backlog);
  expect(elapsed).toBeLessThan(10_000);
  const counts = await stack.runtime.queues.jobs.getJobCounts('waiting', 'prioritized', 'active');
  expect(counts.waiting + counts.prioritized + counts.active).toBeGreaterThanOrEqual(backlog);
  expect((await checkLedger(stack.runtime.db)).problems).toEqual([]);
}, 90_000);

it('Redis stopped under load: admissions answer 503 while it is down, and every admitted job completes once it is back', async () => {
  // A service of its own (database and queue prefix), on the same private Redis: the backlog of
  // the test above keeps its workers' slots busy.
  for (const worker of workers.splice(0)) await worker.close({ graceMs: 0 });
  await stack.close();
  stack = await startTestStack({ env: { REDIS_URL: redis.url, RECONCILE_INTERVAL_MS: '60000' } });
  const ws = await stack.workspace({ credits: 1_000 });
  workers.push(
    startWorker({
      services: stack.runtime.services,
      providers: stack.runtime.registry,
      redisUrl: redis.url,
      concurrency: 4,
      reconcile: true,
    }),
  );
  const post = (target: string) =>
    stack.api.post('/v1/jobs', { headers: ws.auth, body: { platform: 'instagram', operation: 'profile', target } });

  const before = await post('outage_before');
  expect(before.status).toBe(202);
  await redis.stop({ save: true });
  const during = await post('outage_during');
  expect(during.status).toBe(503);
  expect(during.headers['retry-after']).toBeDefined();
  await redis.start();
  const after = await eventually(
    async () => {
      const res = await post('outage_after');
      return res.status === 202 ? res : undefined;
    },
    10_000,
    100,
  );
  const ids = [before.body.id as string, after.body.id as string];
  await eventually(async () => {
    const rows = await stack.runtime.db.selectFrom('jobs').select('status').where('id', 'in', ids).execute();
    return rows.every((r) => r.status === 'completed');
  }, 20_000);
  const ledger = await checkLedger(stack.runtime.db);
  expect(ledger.problems).toEqual([]);
}, 60_000);
