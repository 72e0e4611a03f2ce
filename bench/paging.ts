/**
 * Paging benchmark: GET /v1/jobs on a workspace of BENCH_JOBS (1,000,000) jobs, through the
 * whole API (authentication, rate limiter, OpenAPI validation, the page query, rendering), one
 * request at a time over a keep-alive connection, against a same-run baseline: GET
 * /v1/jobs/{job_id} of one job (a primary-key lookup through the same stack).
 *
 * The jobs are bulk-inserted with generate_series into a private database, in ID (time) order,
 * most of them completed instagram profiles, with a few of everything a filter asks for:
 * 1 in 100 failed, 1 in 5 of twitter (1 in 10 twitter followers), 1 in 50 from one schedule;
 * a second workspace of BENCH_NEIGHBOUR_JOBS (200,000) jobs, all newer (their IDs sort after),
 * shares the table: a plan that read the primary key backwards would pass all of them first.
 * Results are empty (no result pages), so a page measures the list, not result streaming.
 *
 * Measured, BENCH_REQUESTS (1,000) requests each after BENCH_WARMUP (100), limit 25:
 * - the first page; the hundredth page (starting_after the 2,475th newest job);
 * - filtered pages: status=failed (first and hundredth), platform=twitter&operation=followers,
 *   status=completed (a filter most jobs pass), schedule_id;
 * - the first and hundredth pages with include_result=false.
 * Each row prints the index the page query reads (the statement listJobs sends, explained) and
 * its execution time inside Postgres (EXPLAIN ANALYZE, median of 5) beside the request's p50
 * and p99.
 *
 * Target: every page's p99 < 50 ms. Exits with code 1 when one is missed.
 *
 * Run: npm run bench:paging   (BENCH_JOBS, BENCH_NEIGHBOUR_JOBS, BENCH_REQUESTS, BENCH_WARMUP;
 *      DATABASE_URL / REDIS_URL; the database is created and dropped)
 */
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { createApp, RedisRateLimiter } from '@sdx/app-api';
import { loadConfig } from '@sdx/config';
import type { JobStatus } from '@sdx/db';
import { type JobFilters, listJobs } from '@sdx/domain/testing';
import { createRuntime } from '@sdx/runtime';
import { explain, indexesIn, recordingStatements, TEST_SECRETS_KEY } from '@sdx/testing';
import { benchPrefix, benchRedisUrl, createBenchDatabase } from './lib/db';
import { keepAliveAgent, send, serve } from './lib/http';
import { AMPLE, seedBenchWorkspace, waitFor } from './lib/seed';
import { ms, summarize, table, verdict } from './lib/stats';

const JOBS = Number(process.env.BENCH_JOBS ?? 1_000_000);
const NEIGHBOUR_JOBS = Number(process.env.BENCH_NEIGHBOUR_JOBS ?? 200_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1000);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 100);
const CHUNK = 100_000;
const TARGET_P99_MS = 50;

async function main(): Promise<void> {
  const database = await createBenchDatabase('paging');
  const config = loadConfig({
    NODE_ENV: 'production',
    SECRETS_KEY: TEST_SECRETS_KEY,
    PROVIDER_MODE: 'sandbox',
    DATABASE_URL: database.url,
    REDIS_URL: benchRedisUrl(),
    REDIS_PREFIX: benchPrefix('paging'),
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'silent',
    SEED_DEMO: '0',
  });
  const runtime = createRuntime(config, { name: 'bench-paging', dbPoolSize: 10 });
  const closers: Array<() => Promise<void>> = [];
  let failed = false;
  try {
    await waitFor(() => runtime.redis.status === 'ready', 5000, 'Redis');
    const db = runtime.db;
    const ws = await seedBenchWorkspace(runtime, { name: 'bench paging', ...AMPLE });
    const neighbour = await seedBenchWorkspace(runtime, { name: 'bench neighbour', ...AMPLE });
    const scheduleId = 'sch_bench_paging';

    const insert = async (workspaceId: string, prefix: string, count: number) => {
      for (let from = 1; from <= count; from += CHUNK) {
        const to = Math.min(count, from + CHUNK - 1);
        await sql`
          insert into jobs (id, workspace_id, platform, operation, target, normalized_target, request_key, requested_limit, status,
                            max_attempts, credit_rate, results_per_credit, base_credits, schedule_id, result_count, billed_units,
                            billed_credits, created_at, started_at, finished_at)
          select ${prefix} || lpad(g::text, 10, '0'), ${workspaceId},
                 case when g % 5 = 0 then 'twitter' else 'instagram' end,
                 case when g % 10 = 0 then 'followers' else 'profile' end,
                 't' || g, 't' || g, 'k' || g, 25,
                 case when g % 100 = 0 then 'failed' else 'completed' end,
                 4, 1, 1, 0,
                 case when g % 50 = 0 then ${scheduleId} end,
                 case when g % 100 = 0 then null else 0 end, 0, 0,
                 now() - make_interval(secs => ${count} - g), now() - make_interval(secs => ${count} - g), now() - make_interval(secs => ${count} - g)
          from generate_series(${from}::int, ${to}::int) g
        `.execute(db);
        process.stdout.write(`  ${workspaceId === ws.workspaceId ? 'workspace' : 'neighbour'}: ${to.toLocaleString('en')} jobs\r`);
      }
      process.stdout.write('\n');
    };
    console.log(`paging benchmark: ${new Date().toISOString()}, node ${process.version}`);
    const seeding = performance.now();
    await insert(ws.workspaceId, 'job_0bench', JOBS);
    await insert(neighbour.workspaceId, 'job_0nbr', NEIGHBOUR_JOBS);
    await sql`vacuum analyze jobs`.execute(db);
    console.log(
      `seeded ${JOBS.toLocaleString('en')} + ${NEIGHBOUR_JOBS.toLocaleString('en')} jobs in ${((performance.now() - seeding) / 1000).toFixed(0)} s`,
    );

    const nth = async (n: number, where = sql`true`) =>
      (
        await sql<{
          id: string;
        }>`select id from jobs where workspace_id = ${ws.workspaceId} and ${where} order by id desc offset ${n - 1} limit 1`.execute(db)
      ).rows[0].id;
    const page100 = await nth(99 * 25);
    // The hundredth page of failed jobs (or the last full one, on a smaller run).
    const failedCount = JOBS / 100;
    const failed100 = await nth(Math.min(99 * 25, failedCount - 25), sql`status = 'failed'`);
    const baselineJob = await nth(1);

    const api = await serve(
      createApp({
        services: runtime.services,
        registry: runtime.registry,
        limiter: new RedisRateLimiter(runtime.redis, config.redisPrefix),
        redis: runtime.redis,
      }),
    );
    closers.push(api.close);
    const agent = keepAliveAgent(1);
    const headers = { 'X-API-Key': ws.apiKey };

    const scenarios: Array<{ name: string; path: string; page: boolean; filters?: Record<string, string> }> = [
      { name: 'baseline: GET /v1/jobs/{id}', path: `/v1/jobs/${baselineJob}`, page: false },
      { name: 'first page', path: '/v1/jobs?limit=25', page: true },
      { name: '100th page', path: `/v1/jobs?limit=25&starting_after=${page100}`, page: true },
      { name: 'status=failed, first page', path: '/v1/jobs?limit=25&status=failed', page: true },
      { name: 'status=failed, 100th page', path: `/v1/jobs?limit=25&status=failed&starting_after=${failed100}`, page: true },
      { name: 'platform=twitter&operation=followers', path: '/v1/jobs?limit=25&platform=twitter&operation=followers', page: true },
      {
        name: 'status=completed (most jobs), 100th page',
        path: `/v1/jobs?limit=25&status=completed&starting_after=${page100}`,
        page: true,
      },
      { name: 'schedule_id', path: `/v1/jobs?limit=25&schedule_id=${scheduleId}`, page: true },
      { name: 'first page, include_result=false', path: '/v1/jobs?limit=25&include_result=false', page: true },
      { name: '100th page, include_result=false', path: `/v1/jobs?limit=25&include_result=false&starting_after=${page100}`, page: true },
    ];

    const rows: string[][] = [
      ['request', 'index of the page query', 'query ms', 'p50 ms', 'p99 ms', 'max ms', 'p99 / baseline', 'target', 'result'],
    ];
    let baselineP99 = Number.NaN;
    for (const scenario of scenarios) {
      const query = scenario.page
        ? await pageQuery(runtime, ws.workspaceId, scenario.path)
        : { indexes: 'jobs_pkey', executionMs: Number.NaN };
      const samples: number[] = [];
      for (let i = 0; i < WARMUP + REQUESTS; i++) {
        const started = performance.now();
        const reply = await send(agent, api.url, { method: 'GET', path: scenario.path, headers });
        const elapsed = performance.now() - started;
        if (reply.status !== 200) throw new Error(`${scenario.name}: ${reply.status} ${reply.body.slice(0, 200)}`);
        if (scenario.page && i === 0 && (JSON.parse(reply.body) as unknown[]).length !== 25)
          throw new Error(`${scenario.name}: not a full page`);
        if (i >= WARMUP) samples.push(elapsed);
      }
      const s = summarize(samples);
      if (!scenario.page) baselineP99 = s.p99;
      const ok = !scenario.page || s.p99 < TARGET_P99_MS;
      failed ||= !ok;
      rows.push([
        scenario.name,
        query.indexes,
        ms(query.executionMs, 3),
        ms(s.p50),
        ms(s.p99),
        ms(s.max),
        ms(s.p99 / baselineP99),
        scenario.page ? `p99 < ${TARGET_P99_MS}` : '-',
        scenario.page ? verdict(ok) : '-',
      ]);
    }
    agent.destroy();
    console.log(`\n${REQUESTS} requests per row after ${WARMUP} of warm-up, one at a time, limit 25`);
    console.log(table(rows));
    console.log(failed ? '\nsome target MISSED' : '\nevery target met');
  } finally {
    for (const close of closers.reverse()) await close();
    await runtime.close();
    await database.drop();
  }
  if (failed) process.exitCode = 1;
}

/**
 * The page query of `path` as listJobs sends it (recorded): the indexes its plan reads, and the
 * median of 5 executions' times as Postgres measures them (EXPLAIN ANALYZE), the query's own
 * share of a request.
 */
async function pageQuery(
  runtime: ReturnType<typeof createRuntime>,
  workspaceId: string,
  path: string,
): Promise<{ indexes: string; executionMs: number }> {
  const query = new URL(path, 'http://x').searchParams;
  const workspace = await runtime.db.selectFrom('workspaces').selectAll().where('id', '=', workspaceId).executeTakeFirstOrThrow();
  const filters: JobFilters = {
    status: (query.get('status') ?? undefined) as JobStatus | undefined,
    platform: query.get('platform') ?? undefined,
    operation: query.get('operation') ?? undefined,
    scheduleId: query.get('schedule_id') ?? undefined,
  };
  const recorder = recordingStatements(runtime.db);
  await listJobs(
    recorder.db,
    { workspace, keyId: null, role: 'viewer' },
    { limit: Number(query.get('limit') ?? 25), startingAfter: query.get('starting_after') },
    filters,
  );
  const page = recorder.statements.find((statement) => /order by workspace_id, id desc/.test(statement.sql))!;
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const { rows } = await runtime.db.executeQuery<{ 'QUERY PLAN': Array<{ 'Execution Time': number }> }>({
      ...page,
      sql: `explain (analyze, format json) ${page.sql}`,
    });
    times.push(rows[0]['QUERY PLAN'][0]['Execution Time']);
  }
  return { indexes: indexesIn(await explain(runtime.db, page)).join(', ') || 'none', executionMs: summarize(times).p50 };
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
