/**
 * Monitors benchmark: what a monitor costs beyond the batches it makes, how fast a year of one
 * target's points reads back, and how many bytes a stored point takes (issue 49's "Must hold").
 *
 * 1. A run's cost. A profile monitor of BENCH_TARGETS (1,000) targets on the sandbox, run by hand
 *    (POST /v1/monitors/{id}/run: the all-or-nothing check, then its batches of 100), run to the
 *    end by the service's worker (forked, startWorker as apps/worker runs it); once every job has
 *    ended the run is completed as a scheduler tick does (advanceMonitorRun: reads every job's
 *    result, keeps the changed values as points, records changes). Against the same targets as
 *    plain batches of 100 (POST /v1/batches × 10), no monitor, run by the same worker. Each side's
 *    service time: wall time from the first request to every batch completed (monitor: to the run
 *    completed), and the CPU time the service's processes spent meanwhile (the worker, this
 *    process serving the API, and the database's Postgres backends). BENCH_TURNS (3) rounds, each
 *    running both sides, the first side alternating; the medians' ratio is judged.
 *    Target: monitor ≤ 1.2 × plain (wall and CPU).
 * 2. GET /v1/monitors/{id}/series for one target and metric over one year of hourly points
 *    (8,760), BENCH_REQUESTS (500) sequential requests after BENCH_WARMUP (50), through the whole
 *    API over a keep-alive connection; beside it, in the same run, the same target's three
 *    metrics (26,280 points, not judged) and the baseline GET /v1/monitors/{id}.
 *    The year is seeded in one INSERT … SELECT generate_series for BENCH_SERIES_TARGETS (100)
 *    targets × 3 metrics, in time order (as hourly runs write them), into the partitioned
 *    monitor_points, its monthly partitions made first as the service makes them
 *    (ensureMonthPartition). Target: p99 < 50 ms.
 * 3. Bytes per point: pg_total_relation_size of every partition of monitor_points (heap, TOAST
 *    and indexes), after VACUUM ANALYZE, divided by the points they hold. Reported (docs/capacity.md
 *    sizes monitors' storage with it), not judged.
 *
 * Exits with code 1 when a target is missed. The judged figures are printed last as one line
 * `BENCH_RESULT {json}` (as bench:jobs does).
 *
 * Run: npm run bench:monitors   (BENCH_PARTS (run,series: `run` is 1, `series` 2 and 3), BENCH_TARGETS, BENCH_TURNS, BENCH_WORKERS (1),
 *      BENCH_WORKER_CONCURRENCY (16), BENCH_SERIES_TARGETS, BENCH_REQUESTS, BENCH_WARMUP;
 *      DATABASE_URL / REDIS_URL; the database `sdx_bench_monitors_…` is created and dropped,
 *      the Redis prefix is its own and its queues are obliterated)
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import pg from 'pg';
import { createApp, RedisRateLimiter } from '@sdx/app-api';
import { loadConfig } from '@sdx/config';
import {
  advanceMonitorRun,
  ensureMonthPartition,
  PROFILE_METRICS,
  readSeriesJson,
  type SeriesQuery,
  type Tenant,
} from '@sdx/domain/testing';
import { createRuntime } from '@sdx/runtime';
import { TEST_SECRETS_KEY } from '@sdx/testing';
import { processesCpu, samplePostgresCpu } from './lib/cpu';
import { benchPrefix, benchRedisUrl, createBenchDatabase } from './lib/db';
import { keepAliveAgent, send, serve } from './lib/http';
import { AMPLE, seedBenchWorkspace, waitFor } from './lib/seed';
import { ms, summarize, table, verdict } from './lib/stats';
import { startWorkerChild, type WorkerChild } from './lib/worker-child';

const TARGETS = Number(process.env.BENCH_TARGETS ?? 1000);
const TURNS = Number(process.env.BENCH_TURNS ?? 3);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 1);
const WORKER_CONCURRENCY = Number(process.env.BENCH_WORKER_CONCURRENCY ?? 16);
const SERIES_TARGETS = Number(process.env.BENCH_SERIES_TARGETS ?? 100);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 500);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 50);
const BATCH = 100;
const HOURS = 8760;
const RATIO_TARGET = 1.2;
const TARGET_P99_MS = 50;
const RUN_TIMEOUT_MS = 600_000;
/** BENCH_PARTS: `run` (1), `series` (2 and 3, which reads the points 2 seeds); both by default. */
const PARTS = new Set((process.env.BENCH_PARTS ?? 'run,series').split(','));

interface Side {
  wallMs: number;
  cpuS: number;
  workerCpuS: number;
  apiCpuS: number;
  postgresCpuS: number;
  jobs: number;
  observations: number | null;
  /** Monitor side: the completing advanceMonitorRun alone (reading the results, writing points and changes), ms. */
  completionMs: number | null;
}

const median = (values: number[]) => summarize(values).p50;

/** The BENCH_RESULT figures. */
const result: Record<string, number> = {};
/** The verdicts' table: its heading, then a row per judged or reported figure. */
const verdicts: string[][] = [['measure', 'monitor', 'plain / baseline', 'figure', 'target', 'result']];

async function main(): Promise<void> {
  process.env.PROVIDER_MODE ??= 'sandbox';
  const database = await createBenchDatabase('monitors');
  const env: Record<string, string> = {
    NODE_ENV: 'production',
    SECRETS_KEY: TEST_SECRETS_KEY,
    PROVIDER_MODE: 'sandbox',
    DATABASE_URL: database.url,
    REDIS_URL: benchRedisUrl(),
    REDIS_PREFIX: benchPrefix('monitors'),
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'silent',
    SANDBOX_LATENCY_MS: '0',
    SEED_DEMO: '0',
  };
  const config = loadConfig(env);
  const runtime = createRuntime(config, { name: 'bench-monitors', dbPoolSize: 20 });
  const bare = new pg.Pool({ connectionString: database.url, max: 4 });
  const closers: Array<() => Promise<void>> = [];
  let failed = false;
  try {
    await waitFor(() => runtime.redis.status === 'ready', 5000, 'Redis');
    const ws = await seedBenchWorkspace(runtime, { name: 'bench monitors', ...AMPLE });
    const api = await serve(
      createApp({
        services: runtime.services,
        registry: runtime.registry,
        limiter: new RedisRateLimiter(runtime.redis, config.redisPrefix),
        redis: runtime.redis,
      }),
    );
    closers.push(api.close);
    const agent = keepAliveAgent(4);
    closers.push(() => Promise.resolve(agent.destroy()));
    const headers = { 'X-API-Key': ws.apiKey };
    const call = async (method: 'GET' | 'POST', path: string, body?: unknown, expect = [200, 201, 202]) => {
      const reply = await send(agent, api.url, { method, path, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      if (!expect.includes(reply.status)) throw new Error(`${method} ${path}: ${reply.status} ${reply.body.slice(0, 300)}`);
      return JSON.parse(reply.body) as Record<string, unknown>;
    };
    const load = () =>
      loadavg()
        .map((l) => l.toFixed(2))
        .join(' ');
    console.log(`monitors benchmark: ${new Date().toISOString()}, node ${process.version}, load average ${load()}`);

    // ------------------------------------------------------------ 1. a run's cost
    const targets = Array.from({ length: TARGETS }, (_, i) => `bench_user_${i}`);
    if (PARTS.has('run')) {
      const monitor = await call('POST', '/v1/monitors', {
        name: 'bench run cost',
        platform: 'instagram',
        operation: 'profile',
        targets,
        frequency: 'hourly',
      });
      const monitorId = monitor.id as string;
      const workers: WorkerChild[] = [];
      for (let i = 0; i < WORKERS; i++) {
        const worker = await startWorkerChild({
          kind: 'real',
          concurrency: WORKER_CONCURRENCY,
          redisUrl: config.redisUrl,
          prefix: config.redisPrefix,
          env,
        });
        workers.push(worker);
        closers.push(() => worker.stop());
      }
      const openJobs = async (batchIds: string[]) =>
        (
          await bare.query<{ n: number }>(
            `select count(*)::int as n from jobs where batch_id = any($1::text[]) and status in ('queued', 'running')`,
            [batchIds],
          )
        ).rows[0].n;
      const untilEnded = async (batchIds: string[]) => {
        const deadline = Date.now() + RUN_TIMEOUT_MS;
        while ((await openJobs(batchIds)) > 0) {
          if (Date.now() > deadline) throw new Error('timed out waiting for the batches to end');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      const measure = async (
        work: () => Promise<{ jobs: number; observations: number | null; completionMs: number | null }>,
      ): Promise<Side> => {
        const workerCpu = processesCpu(workers.map((w) => w.pid));
        const postgresCpu = samplePostgresCpu(bare, database.name, 100);
        const apiCpu = process.cpuUsage();
        const started = performance.now();
        const done = await work();
        const wallMs = performance.now() - started;
        const api = process.cpuUsage(apiCpu);
        const apiCpuS = (api.user + api.system) / 1e6;
        const workerCpuS = workerCpu.stop();
        const postgresCpuS = (await postgresCpu.stop()).backends;
        return { wallMs, cpuS: workerCpuS + apiCpuS + postgresCpuS, workerCpuS, apiCpuS, postgresCpuS, ...done };
      };
      const monitorSide = () =>
        measure(async () => {
          const run = await call('POST', `/v1/monitors/${monitorId}/run`);
          const runId = run.id as string;
          await untilEnded(run.batch_ids as string[]);
          // What the scheduler's next tick does with a run whose batches have all ended.
          let completing = performance.now();
          let stored = await advanceMonitorRun(runtime.services, runId);
          while (stored?.status !== 'completed') {
            if (stored && stored.status !== 'running' && stored.status !== 'queued')
              throw new Error(`monitor run ${runId} ended ${stored.status}: ${JSON.stringify(stored.error)}`);
            await untilEnded(stored?.batch_ids ?? (run.batch_ids as string[]));
            completing = performance.now();
            stored = await advanceMonitorRun(runtime.services, runId);
          }
          return { jobs: TARGETS, observations: stored.observations, completionMs: performance.now() - completing };
        });
      const plainSide = () =>
        measure(async () => {
          const batchIds: string[] = [];
          for (let i = 0; i < targets.length; i += BATCH) {
            const batch = await call('POST', '/v1/batches', {
              platform: 'instagram',
              operation: 'profile',
              targets: targets.slice(i, i + BATCH),
            });
            batchIds.push(batch.id as string);
          }
          await untilEnded(batchIds);
          return { jobs: TARGETS, observations: null, completionMs: null };
        });

      const monitorSides: Side[] = [];
      const plainSides: Side[] = [];
      const runRows: string[][] = [['round', 'side', 'wall s', 'CPU s (worker + API + Postgres)', 'completion s', 'points kept']];
      for (let turn = 0; turn < TURNS; turn++) {
        const order = turn % 2 === 0 ? (['monitor', 'plain'] as const) : (['plain', 'monitor'] as const);
        for (const side of order) {
          const figures = side === 'monitor' ? await monitorSide() : await plainSide();
          (side === 'monitor' ? monitorSides : plainSides).push(figures);
          runRows.push([
            String(turn + 1),
            side === 'monitor' ? `monitor run (${TARGETS / BATCH} batches)` : `plain batches (${TARGETS / BATCH} × ${BATCH})`,
            (figures.wallMs / 1000).toFixed(2),
            `${figures.cpuS.toFixed(2)} (${figures.workerCpuS.toFixed(2)} + ${figures.apiCpuS.toFixed(2)} + ${figures.postgresCpuS.toFixed(2)})`,
            figures.completionMs === null ? '-' : (figures.completionMs / 1000).toFixed(2),
            figures.observations === null ? '-' : String(figures.observations),
          ]);
          process.stdout.write(`  round ${turn + 1} ${side}: ${(figures.wallMs / 1000).toFixed(2)} s\n`);
        }
      }
      for (const worker of workers) await worker.stop();
      const wallRatio = median(monitorSides.map((s) => s.wallMs)) / median(plainSides.map((s) => s.wallMs));
      const cpuRatio = median(monitorSides.map((s) => s.cpuS)) / median(plainSides.map((s) => s.cpuS));
      console.log(
        `\n1. a run's cost: ${TARGETS} profile targets, ${WORKERS} worker process(es) × concurrency ${WORKER_CONCURRENCY}, sandbox latency 0, ${TURNS} rounds`,
      );
      console.log(table(runRows));
      const wallOk = wallRatio <= RATIO_TARGET;
      const cpuOk = cpuRatio <= RATIO_TARGET;
      failed ||= !wallOk || !cpuOk;
      result.run_monitor_wall_s = Number((median(monitorSides.map((s) => s.wallMs)) / 1000).toFixed(2));
      result.run_plain_wall_s = Number((median(plainSides.map((s) => s.wallMs)) / 1000).toFixed(2));
      result.run_wall_ratio = Number(wallRatio.toFixed(3));
      result.run_monitor_cpu_s = Number(median(monitorSides.map((s) => s.cpuS)).toFixed(2));
      result.run_plain_cpu_s = Number(median(plainSides.map((s) => s.cpuS)).toFixed(2));
      result.run_cpu_ratio = Number(cpuRatio.toFixed(3));
      verdicts.push(
        [
          'run wall time (median)',
          `${result.run_monitor_wall_s} s`,
          `${result.run_plain_wall_s} s`,
          `× ${wallRatio.toFixed(3)}`,
          `≤ × ${RATIO_TARGET}`,
          verdict(wallOk),
        ],
        [
          'run CPU time (median)',
          `${result.run_monitor_cpu_s} s`,
          `${result.run_plain_cpu_s} s`,
          `× ${cpuRatio.toFixed(3)}`,
          `≤ × ${RATIO_TARGET}`,
          verdict(cpuOk),
        ],
      );
    }

    // ------------------------------------------------------------ 2. a year of points, read back
    if (PARTS.has('series')) {
      const seriesTargets = Array.from({ length: SERIES_TARGETS }, (_, i) => `bench_series_${i}`);
      const seriesMonitor = await call('POST', '/v1/monitors', {
        name: 'bench series',
        platform: 'instagram',
        operation: 'profile',
        targets: seriesTargets,
        frequency: 'hourly',
      });
      const seriesMonitorId = seriesMonitor.id as string;
      const end = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);
      const start = new Date(end.getTime() - (HOURS - 1) * 3_600_000);
      for (
        let month = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), 1));
        month <= end;
        month = new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 1))
      ) {
        await ensureMonthPartition(runtime.db, month);
      }
      const seeding = performance.now();
      await sql`
        insert into monitor_points (monitor_id, workspace_id, target, item_id, metric, at, value, run_id)
        select ${seriesMonitorId}, ${ws.workspaceId}, 'bench_series_' || t, '', m.metric,
               ${start.toISOString()}::timestamptz + make_interval(hours => h), 1000 + h * (m.n + 1) + t, 'mrn_bench_' || h
        from generate_series(0, ${HOURS - 1}::int) h
             cross join generate_series(0, ${SERIES_TARGETS - 1}::int) t
             cross join unnest(${[...PROFILE_METRICS]}::text[]) with ordinality as m(metric, n)
        order by h, t, m.n
      `.execute(runtime.db);
      const seededPoints = HOURS * SERIES_TARGETS * PROFILE_METRICS.length;
      const seedSeconds = (performance.now() - seeding) / 1000;
      await sql`vacuum analyze monitor_points`.execute(runtime.db);
      for (const partition of (
        await bare.query<{ name: string }>(
          `select inhrelid::regclass::text as name from pg_inherits where inhparent = 'monitor_points'::regclass`,
        )
      ).rows) {
        await bare.query(`vacuum analyze ${partition.name}`);
      }
      console.log(
        `\n2. seeded ${seededPoints.toLocaleString('en')} points (${SERIES_TARGETS} targets × 3 metrics × ${HOURS} hours) in ${seedSeconds.toFixed(1)} s`,
      );

      const scenarios: Array<{ name: string; path: string; points: number; judged: boolean; query?: SeriesQuery }> = [
        { name: 'baseline: GET /v1/monitors/{id}', path: `/v1/monitors/${seriesMonitorId}`, points: 0, judged: false },
        {
          name: 'series: 1 target, 1 metric, 1 year',
          path: `/v1/monitors/${seriesMonitorId}/series?target=bench_series_0&metric=followers_count`,
          points: HOURS,
          judged: true,
          query: { target: 'bench_series_0', metric: 'followers_count' },
        },
        {
          name: 'series: 1 target, 3 metrics, 1 year',
          path: `/v1/monitors/${seriesMonitorId}/series?target=bench_series_0`,
          points: HOURS * 3,
          judged: false,
          query: { target: 'bench_series_0' },
        },
      ];
      const workspace = await runtime.db.selectFrom('workspaces').selectAll().where('id', '=', ws.workspaceId).executeTakeFirstOrThrow();
      const tenant: Tenant = { workspace, keyId: null, role: null };
      const seriesRows: string[][] = [
        ['request', 'points', 'readSeriesJson p50 ms', 'p50 ms', 'p99 ms', 'max ms', 'p99 / baseline', 'target', 'result'],
      ];
      let baselineP99 = Number.NaN;
      for (const scenario of scenarios) {
        const samples: number[] = [];
        for (let i = 0; i < WARMUP + REQUESTS; i++) {
          const started = performance.now();
          const reply = await send(agent, api.url, { method: 'GET', path: scenario.path, headers });
          const elapsed = performance.now() - started;
          if (reply.status !== 200) throw new Error(`${scenario.name}: ${reply.status} ${reply.body.slice(0, 200)}`);
          if (i === 0 && scenario.points > 0) {
            const data = (JSON.parse(reply.body) as { data: Array<{ points: unknown[] }> }).data;
            const points = data.reduce((sum, s) => sum + s.points.length, 0);
            if (points !== scenario.points) throw new Error(`${scenario.name}: ${points} points, expected ${scenario.points}`);
          }
          if (i >= WARMUP) samples.push(elapsed);
        }
        const s = summarize(samples);
        if (scenario.points === 0) baselineP99 = s.p99;
        // The route's domain function alone (the query building the answer's JSON, no HTTP or validation): the request's share spent reading.
        const domain: number[] = [];
        for (let i = 0; scenario.query && i < 25; i++) {
          const started = performance.now();
          await readSeriesJson(runtime.db, tenant, seriesMonitorId, scenario.query);
          domain.push(performance.now() - started);
        }
        const ok = !scenario.judged || s.p99 < TARGET_P99_MS;
        failed ||= !ok;
        if (scenario.judged) {
          result.series_p50_ms = Number(s.p50.toFixed(2));
          result.series_p99_ms = Number(s.p99.toFixed(2));
        } else if (scenario.points === 0) {
          result.baseline_p99_ms = Number(s.p99.toFixed(2));
        } else {
          result.series_3_metrics_p99_ms = Number(s.p99.toFixed(2));
        }
        seriesRows.push([
          scenario.name,
          scenario.points ? scenario.points.toLocaleString('en') : '-',
          scenario.query ? ms(summarize(domain).p50) : '-',
          ms(s.p50),
          ms(s.p99),
          ms(s.max),
          ms(s.p99 / baselineP99),
          scenario.judged ? `p99 < ${TARGET_P99_MS}` : '-',
          scenario.judged ? verdict(ok) : '-',
        ]);
      }
      console.log(`${REQUESTS} requests per row after ${WARMUP} of warm-up, one at a time`);
      console.log(table(seriesRows));

      // ------------------------------------------------------------ 3. bytes per point
      const { rows: sizes } = await bare.query<{ partitions: number; points: string; heap: string; indexes: string; total: string }>(`
        select count(*)::int as partitions,
               (select count(*) from monitor_points)::bigint as points,
               coalesce(sum(pg_table_size(inhrelid)), 0)::bigint as heap,
               coalesce(sum(pg_indexes_size(inhrelid)), 0)::bigint as indexes,
               coalesce(sum(pg_total_relation_size(inhrelid)), 0)::bigint as total
        from pg_inherits where inhparent = 'monitor_points'::regclass`);
      const size = sizes[0];
      const points = Number(size.points);
      const bytesPerPoint = Number(size.total) / points;
      result.bytes_per_point = Number(bytesPerPoint.toFixed(1));
      console.log(
        `\n3. bytes per point: ${Number(size.total).toLocaleString('en')} bytes in ${size.partitions} monthly partitions ` +
          `(table ${Number(size.heap).toLocaleString('en')} + indexes ${Number(size.indexes).toLocaleString('en')}) / ${points.toLocaleString('en')} points ` +
          `= ${bytesPerPoint.toFixed(1)} bytes (table ${(Number(size.heap) / points).toFixed(1)} + indexes ${(Number(size.indexes) / points).toFixed(1)})`,
      );

      verdicts.push(
        [
          'series 1 target × 1 year, p99',
          `${ms(result.series_p99_ms)} ms`,
          `${ms(result.baseline_p99_ms)} ms`,
          `p50 ${ms(result.series_p50_ms)} ms`,
          `< ${TARGET_P99_MS} ms`,
          verdict(result.series_p99_ms < TARGET_P99_MS),
        ],
        ['bytes per point', `${result.bytes_per_point}`, '-', '-', 'reported', '-'],
      );
    }

    // ------------------------------------------------------------ verdicts
    console.log('\nverdicts');
    console.log(table(verdicts));
    console.log(`load average at the end: ${load()}`);
    console.log(failed ? '\nsome target MISSED' : '\nevery target met');
    console.log(`BENCH_RESULT ${JSON.stringify({ bench: 'monitors', figures: result })}`);
  } finally {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await runtime.queues.jobs.obliterate({ force: true }).catch(() => undefined);
    await runtime.queues.batchChildren.obliterate({ force: true }).catch(() => undefined);
    await bare.end().catch(() => undefined);
    await runtime.close();
    await database.drop();
  }
  if (failed) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
