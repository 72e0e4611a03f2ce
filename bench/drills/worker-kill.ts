/**
 * Drill: a worker SIGKILLed mid-job, 20 times.
 *
 * A private Postgres and Redis; 3-page jobs (sandbox, 300 ms a page) admitted through the
 * service; a real worker process (apps/worker) is started, killed with SIGKILL as soon as one
 * of its attempts has checkpointed a page, and started again, 20 times (more jobs are admitted
 * whenever none is left). A last worker then finishes everything.
 *
 * Checks: every job completes (none lost, none failed), each with its 300 distinct items; the
 * ledger is exact (each job billed once); recovery after the last kill.
 *
 * Run: npm run drill:worker-kill   (DRILL_KILLS=20, DRILL_JOBS=40)
 */
import { sql } from 'kysely';
import { createJob, type Tenant } from '@sdx/domain/testing';
import { seedWorkspace } from '@sdx/testing';
import { checkLedger, report, startDrillEnvironment, startService, waitUntil } from './lib';

const KILLS = Number(process.env.DRILL_KILLS ?? 20);
const JOBS = Number(process.env.DRILL_JOBS ?? 40);
const TIMING = {
  HEARTBEAT_TIMEOUT_MS: '1500',
  HEARTBEAT_INTERVAL_MS: '200',
  RECONCILE_INTERVAL_MS: '300',
  JOB_MAX_ATTEMPTS: '50',
  WORKER_CONCURRENCY: '4',
};

async function main(): Promise<void> {
  const drill = await startDrillEnvironment('worker_kill', TIMING);
  const { runtime } = drill;
  try {
    const ws = await seedWorkspace(runtime, { credits: 1_000_000, maxActiveJobs: 10_000 });
    const tenant: Tenant = {
      workspace: await runtime.db.selectFrom('workspaces').selectAll().where('id', '=', ws.workspaceId).executeTakeFirstOrThrow(),
      keyId: null,
      role: null,
    };
    let admitted = 0;
    const admit = async (count: number) => {
      await Promise.all(
        Array.from({ length: count }, () =>
          createJob(
            runtime.services,
            tenant,
            { platform: 'youtube', operation: 'playlist_items', target: `PLdrill${admitted++}_sandbox_slow_300`, limit: 300 },
            { endpoint: 'POST /v1/jobs' },
          ),
        ),
      );
      await runtime.queues.idle();
    };
    await admit(JOBS);
    const active = async () =>
      Number(
        (await sql<{ n: number }>`select count(*)::int as n from jobs where status in ('queued', 'running')`.execute(runtime.db)).rows[0].n,
      );

    let kills = 0;
    const interrupted = new Set<string>();
    const started = Date.now();
    while (kills < KILLS) {
      if ((await active()) < 8) await admit(JOBS);
      const worker = startService('worker', drill.env, `worker-${kills + 1}`);
      const spawnedAt = new Date();
      // Mid-job: one of this worker's attempts has checkpointed a page and not finished.
      const victims = await waitUntil(
        async () => {
          const { rows } = await sql<{ id: string }>`
            select id from jobs where status = 'running' and checkpoint_pages >= 1 and started_at is not null and heartbeat_at >= ${spawnedAt}
          `.execute(runtime.db);
          return rows.length > 0 ? rows : null;
        },
        60_000,
        `worker ${kills + 1} mid-job`,
        20,
      ).catch((error) => {
        throw new Error(`${String(error)}\n${worker.output().slice(-2000)}`);
      });
      const exit = await worker.stop('SIGKILL');
      if (exit.signal !== 'SIGKILL')
        throw new Error(`worker ${kills + 1} exited by itself: ${JSON.stringify(exit)}\n${worker.output().slice(-2000)}`);
      for (const v of victims) interrupted.add(v.id);
      kills += 1;
    }
    const lastKill = Date.now();
    const final = startService('worker', drill.env, 'worker-final');
    await waitUntil(async () => (await active()) === 0, 180_000, 'every job terminal', 200);
    const recoveredMs = Date.now() - lastKill;
    await final.stop('SIGTERM');

    const { rows: jobs } = await sql<{
      id: string;
      status: string;
      attempts: number;
      result_count: number | null;
      items: number;
      distinct_items: number;
    }>`
      select j.id, j.status, j.attempts, j.result_count,
             coalesce((select sum(p.item_count) from job_result_pages p where p.job_id = j.id), 0)::int as items,
             (select count(distinct e->>'id') from job_result_pages p, jsonb_array_elements(p.items) e where p.job_id = j.id)::int as distinct_items
      from jobs j
    `.execute(runtime.db);
    const ledger = await checkLedger(runtime.db);
    const notCompleted = jobs.filter((j) => j.status !== 'completed');
    const wrong = jobs.filter((j) => j.status === 'completed' && (j.result_count !== 300 || j.items !== 300 || j.distinct_items !== 300));
    const retried = jobs.filter((j) => j.attempts > 1);
    report(
      'drill: worker SIGKILLed mid-job',
      {
        'workers killed (SIGKILL, mid-job)': kills,
        'jobs admitted': jobs.length,
        'jobs interrupted mid-job': interrupted.size,
        'jobs that needed more than one attempt': retried.length,
        'most attempts of one job': Math.max(...jobs.map((j) => j.attempts)),
        'drill time (s)': ((Date.now() - started) / 1000).toFixed(1),
        'last kill to every job completed (s)': (recoveredMs / 1000).toFixed(1),
      },
      [
        { name: `${KILLS} kills done`, ok: kills === KILLS, detail: `${kills}` },
        { name: 'no job lost or failed', ok: notCompleted.length === 0, detail: `${notCompleted.length} not completed` },
        { name: 'each result whole, no item twice (resumed at checkpoints)', ok: wrong.length === 0, detail: `${wrong.length} wrong` },
        { name: 'the last worker shut down cleanly', ok: final.alive() === false, detail: 'SIGTERM' },
      ],
      ledger,
    );
  } finally {
    await drill.destroy();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
