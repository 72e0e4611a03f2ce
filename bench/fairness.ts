/**
 * Fairness benchmark: one workspace (A) has BENCH_BACKLOG (2,000) queued `sandbox_slow_200`
 * jobs (its active-job cap raised for the test) and the fleet (BENCH_WORKERS worker processes
 * of BENCH_WORKER_CONCURRENCY slots) is busy with them; BENCH_LATE_SECONDS (3 s) in, another
 * workspace (B) submits a single job. Run twice on fresh databases: with the service's queue
 * order (QUEUE_FAIRNESS=workspace: round robin across workspaces by rank) and first come,
 * first served (QUEUE_FAIRNESS=fifo).
 *
 * Figures: B's wait from admission to start; the throughput of the whole run (jobs completed
 * per second, first start to last finish).
 * Targets: with fairness, B's job starts within 1 s, and the throughput is less than 10 % below
 * first come, first served. Exits with code 1 when one is missed.
 *
 * Run: npm run bench:fairness   (uses DATABASE_URL's server and REDIS_URL)
 */
import { sql } from 'kysely';
import { loadConfig } from '@sdx/config';
import { createJob, type Tenant } from '@sdx/domain/testing';
import { createRuntime, untilRedisReady } from '@sdx/runtime';
import { benchPrefix, benchRedisUrl, createBenchDatabase } from './lib/db';
import { sleep } from './lib/heavy';
import { seedBenchWorkspace } from './lib/seed';
import { table, verdict } from './lib/stats';
import { startWorkerChild } from './lib/worker-child';

const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 2_000);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const WORKER_CONCURRENCY = Number(process.env.BENCH_WORKER_CONCURRENCY ?? 8);
const LATE_MS = Number(process.env.BENCH_LATE_SECONDS ?? 3) * 1000;
const SLOW_MS = 200;

interface Result {
  mode: 'workspace' | 'fifo';
  lateWaitMs: number;
  jobs: number;
  seconds: number;
  perSecond: number;
}

async function run(mode: 'workspace' | 'fifo'): Promise<Result> {
  const database = await createBenchDatabase(`fair${mode}`);
  const prefix = benchPrefix(`fair${mode}`);
  const env = {
    DATABASE_URL: database.url,
    REDIS_URL: benchRedisUrl(),
    REDIS_PREFIX: prefix,
    QUEUE_FAIRNESS: mode,
    LOG_LEVEL: 'silent',
    HEARTBEAT_INTERVAL_MS: '1000',
  };
  const runtime = createRuntime(loadConfig(env), { name: 'bench-fairness', dbPoolSize: 10 });
  const workers = [];
  try {
    await untilRedisReady(runtime);
    const tenantOf = async (options: Parameters<typeof seedBenchWorkspace>[1]): Promise<Tenant> => {
      const { workspaceId } = await seedBenchWorkspace(runtime, options);
      return {
        workspace: await runtime.db.selectFrom('workspaces').selectAll().where('id', '=', workspaceId).executeTakeFirstOrThrow(),
        keyId: null,
        role: null,
      };
    };
    const a = await tenantOf({ name: 'backlog', credits: 1_000_000, maxActiveJobs: BACKLOG + 100 });
    const b = await tenantOf({ name: 'late', credits: 1_000 });
    for (let i = 0; i < BACKLOG; i += 250) {
      await Promise.all(
        Array.from({ length: Math.min(250, BACKLOG - i) }, (_, k) =>
          createJob(
            runtime.services,
            a,
            { platform: 'instagram', operation: 'profile', target: `fair_${i + k}_sandbox_slow_${SLOW_MS}` },
            { endpoint: 'POST /v1/jobs' },
          ),
        ),
      );
    }
    await runtime.queues.idle();
    for (let i = 0; i < WORKERS; i++)
      workers.push(await startWorkerChild({ kind: 'real', concurrency: WORKER_CONCURRENCY, redisUrl: env.REDIS_URL, prefix, env }));
    await sleep(LATE_MS);
    const late = await createJob(
      runtime.services,
      b,
      { platform: 'instagram', operation: 'profile', target: `late_sandbox_slow_${SLOW_MS}` },
      { endpoint: 'POST /v1/jobs' },
    );
    for (;;) {
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from jobs where status in ('queued', 'running')`.execute(
        runtime.db,
      );
      if (rows[0].n === 0) break;
      await sleep(200);
    }
    const lateRow = await runtime.db.selectFrom('jobs').selectAll().where('id', '=', late.job.id).executeTakeFirstOrThrow();
    const { rows } = await sql<{ jobs: number; first: Date; last: Date; completed: number }>`
      select count(*)::int as jobs, min(started_at) as first, max(finished_at) as last, count(*) filter (where status = 'completed')::int as completed from jobs
    `.execute(runtime.db);
    const r = rows[0];
    if (r.completed !== r.jobs) throw new Error(`${r.jobs - r.completed} jobs did not complete`);
    const seconds = (r.last.getTime() - r.first.getTime()) / 1000;
    return {
      mode,
      lateWaitMs: lateRow.started_at!.getTime() - lateRow.created_at.getTime(),
      jobs: r.jobs,
      seconds,
      perSecond: r.jobs / seconds,
    };
  } finally {
    for (const w of workers) await w.stop();
    await runtime.queues.jobs.obliterate({ force: true }).catch(() => undefined);
    await runtime.close();
    await database.drop();
  }
}

async function main(): Promise<void> {
  const fair = await run('workspace');
  const fifo = await run('fifo');
  const drop = 1 - fair.perSecond / fifo.perSecond;
  console.log(
    `fairness benchmark: ${BACKLOG} queued jobs of one workspace (${SLOW_MS} ms each), ${WORKERS} workers × ${WORKER_CONCURRENCY} slots; another workspace's single job ${LATE_MS / 1000} s in`,
  );
  console.log(
    table([
      ['queue order', 'late job waited (ms)', 'jobs', 'seconds', 'jobs/s'],
      ...[fair, fifo].map((r) => [
        r.mode === 'workspace' ? 'round robin (service)' : 'first come (fifo)',
        r.lateWaitMs.toFixed(0),
        String(r.jobs),
        r.seconds.toFixed(1),
        r.perSecond.toFixed(1),
      ]),
    ]),
  );
  const startOk = fair.lateWaitMs < 1_000;
  const throughputOk = drop < 0.1;
  console.log(`  the late job starts within 1 s: ${verdict(startOk)} (${fair.lateWaitMs.toFixed(0)} ms)`);
  console.log(`  throughput drop against first come, first served < 10 %: ${verdict(throughputOk)} (${(drop * 100).toFixed(1)} %)`);
  process.exitCode = startOk && throughputOk ? 0 : 1;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
