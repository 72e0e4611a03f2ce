/**
 * Drill: Redis restarted empty with 10,000 jobs queued.
 *
 * A private Postgres and Redis; 10,000 slow jobs admitted through the service; DRILL_WORKERS
 * real worker processes (each with its reconciler, at the default RECONCILE_INTERVAL_MS) run
 * them two at a time, so the backlog stays. Redis is then shut down without saving and started
 * again, empty.
 *
 * Checks: the reconcilers of all workers together re-queue the whole backlog in under 10 s
 * from Redis's restart; the jobs they re-queued add up to the backlog, not more (no two
 * workers took the same rows); every worker took a share (when the backlog spans two reconciler
 * statements per worker at least); no worker died; the ledger is exact.
 *
 * Run: npm run drill:redis-empty   (DRILL_JOBS=10000, DRILL_WORKERS=3)
 */
import { sql } from 'kysely';
import { createJob, RECONCILE_BATCH_SIZE, type Tenant } from '@sdx/domain/testing';
import { seedWorkspace } from '@sdx/testing';
import { checkLedger, report, sleep, startDrillEnvironment, startService, type ServiceProcess, waitUntil } from './lib';

const JOBS = Number(process.env.DRILL_JOBS ?? 10_000);
const WORKERS = Number(process.env.DRILL_WORKERS ?? 3);
const TARGET_MS = 10_000;

/** The jobs a worker's reconciler reported re-queueing, from its log, after `since`. */
function reconciled(worker: ServiceProcess, since: number): number {
  return worker
    .logs()
    .filter((line) => line.msg === 'reconciled jobs' && Number(line.time) >= since)
    .reduce((n, line) => n + Number(line.enqueued ?? 0), 0);
}

async function main(): Promise<void> {
  const drill = await startDrillEnvironment('redis_empty', { WORKER_CONCURRENCY: '2' });
  const { runtime } = drill;
  const workers: ServiceProcess[] = [];
  try {
    const ws = await seedWorkspace(runtime, { credits: 1_000_000, maxActiveJobs: JOBS * 2 });
    const tenant: Tenant = {
      workspace: await runtime.db.selectFrom('workspaces').selectAll().where('id', '=', ws.workspaceId).executeTakeFirstOrThrow(),
      keyId: null,
      role: null,
    };
    const admitStarted = Date.now();
    for (let i = 0; i < JOBS; i += 500) {
      await Promise.all(
        Array.from({ length: Math.min(500, JOBS - i) }, (_, k) =>
          createJob(
            runtime.services,
            tenant,
            { platform: 'instagram', operation: 'profile', target: `backlog_${i + k}_sandbox_slow_20000` },
            { endpoint: 'POST /v1/jobs' },
          ),
        ),
      );
    }
    await runtime.queues.idle();
    const admitMs = Date.now() - admitStarted;

    for (let i = 0; i < WORKERS; i++) workers.push(startService('worker', drill.env, `worker-${i + 1}`));
    // Each worker is consuming and its reconciler has made its first pass.
    await waitUntil(() => workers.every((w) => w.logs().some((l) => l.msg === 'worker started')), 60_000, 'workers started');
    await sleep(6_000);

    const queuedBefore = Number(
      (await sql<{ n: number }>`select count(*)::int as n from jobs where status = 'queued'`.execute(runtime.db)).rows[0].n,
    );
    // Passes from here on are the recovery: one just before it (a worker's routine pass, which
    // may re-add the few jobs marked before the deployment's data epoch began) is not, and its
    // entries were lost with the data anyway.
    const stoppingAt = Date.now();
    await drill.redis.stop({ save: false });
    await drill.redis.start();
    const restartedAt = Date.now();
    const entries = async () => {
      const counts = await runtime.queues.jobs.getJobCounts('waiting', 'prioritized', 'active', 'delayed');
      return Object.values(counts).reduce((a, b) => a + b, 0);
    };
    const emptyAfterRestart = await entries().then(String, () => 'none (not yet reconnected)');
    // Every job still queued has its entry back.
    const requeuedAt = await waitUntil(
      async () => {
        const queued = Number(
          (await sql<{ n: number }>`select count(*)::int as n from jobs where status = 'queued'`.execute(runtime.db)).rows[0].n,
        );
        const n = await entries().catch(() => 0);
        return n >= queued ? Date.now() : null;
      },
      60_000,
      'backlog re-queued',
      100,
    );
    const requeueMs = requeuedAt - restartedAt;
    await sleep(1_000);
    const perWorker = workers.map((w) => reconciled(w, stoppingAt));
    const total = perWorker.reduce((a, b) => a + b, 0);
    const queuedNow = Number(
      (await sql<{ n: number }>`select count(*)::int as n from jobs where status = 'queued'`.execute(runtime.db)).rows[0].n,
    );
    const alive = workers.filter((w) => w.alive()).length;
    const exits = [];
    for (const w of workers) exits.push(await w.stop('SIGTERM'));
    const ledger = await checkLedger(runtime.db);
    report(
      `drill: Redis restarted empty with ${JOBS} jobs queued, ${WORKERS} workers`,
      {
        'jobs admitted (s)': (admitMs / 1000).toFixed(1),
        'jobs queued when Redis restarted': queuedBefore,
        'queue entries right after the restart': emptyAfterRestart,
        'restart to every queued job re-queued (s)': (requeueMs / 1000).toFixed(2),
        'jobs re-queued, per worker': perWorker.join(', '),
        'jobs re-queued in all': total,
      },
      [
        { name: `backlog re-queued in under ${TARGET_MS / 1000} s`, ok: requeueMs < TARGET_MS, detail: `${requeueMs} ms` },
        {
          name: 'no job re-queued twice (re-queued ≤ backlog)',
          ok: total <= queuedBefore && total >= queuedNow,
          detail: `${total} re-queued, ${queuedBefore} queued at the restart, ${queuedNow} still queued`,
        },
        // Judged when the backlog spans two statements per worker at least: a smaller one may go
        // whole to the reconciler whose connection came back first (the small form the test suite runs).
        ...(queuedBefore >= 2 * WORKERS * RECONCILE_BATCH_SIZE
          ? [{ name: 'every worker took a share', ok: perWorker.every((n) => n > 0), detail: perWorker.join(', ') }]
          : []),
        {
          name: 'no worker died; each stopped cleanly',
          ok: alive === WORKERS && exits.every((e) => e.code === 0),
          detail: `${alive}/${WORKERS} alive; exits ${exits.map((e) => e.code ?? e.signal).join(', ')}`,
        },
      ],
      ledger,
    );
  } finally {
    for (const w of workers) await w.stop('SIGKILL');
    await drill.destroy();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
