/**
 * Sign-in benchmark (issue 32: "sign-in p99 under 300 ms at 10 sign-ins a second"): POST
 * /v1/auth/login through the whole API (the sign-in limiter over Redis, the OpenAPI validation,
 * the argon2id check, the verification and two-factor rules, a new session, the workspaces
 * read), open loop at BENCH_RATE (10) a second for BENCH_SECONDS (30) after a 5 s warm-up, from
 * a load generator in its own process, each sign-in a different user.
 *
 * Same-run baselines: one argon2id verification of the same password in this process, one at a
 * time (the floor under any sign-in: the rest is the service's own work); and one durable
 * single-row INSERT commit on the same database, 100 of them spaced 20 ms apart (the disk's
 * flush, whose tail a sign-in no longer waits for: its session commits without it).
 *
 * Target: p99 < 300 ms. Exits with code 1 when missed.
 *
 * Run: npm run bench:sign-in   (BENCH_RATE, BENCH_SECONDS; DATABASE_URL / REDIS_URL; the database is created and dropped)
 */
import { performance } from 'node:perf_hooks';
import { createApp, RedisRateLimiter } from '@sdx/app-api';
import { loadConfig } from '@sdx/config';
import { createUser, hashPassword, systemClock, verifyPassword } from '@sdx/domain/testing';
import { sql } from 'kysely';
import { createRuntime } from '@sdx/runtime';
import { TEST_SECRETS_KEY } from '@sdx/testing';
import { benchPrefix, benchRedisUrl, createBenchDatabase } from './lib/db';
import { serve } from './lib/http';
import { runLoad } from './lib/loadgen';
import { waitFor } from './lib/seed';
import { ms, summarize, table, verdict } from './lib/stats';

const RATE = Number(process.env.BENCH_RATE ?? 10);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const WARMUP_MS = 5000;
const TARGET_P99_MS = 300;
const PASSWORD = 'correct horse battery staple';

async function main(): Promise<void> {
  const database = await createBenchDatabase('signin');
  const config = loadConfig({
    NODE_ENV: 'production',
    SECRETS_KEY: TEST_SECRETS_KEY,
    PROVIDER_MODE: 'sandbox',
    DATABASE_URL: database.url,
    REDIS_URL: benchRedisUrl(),
    REDIS_PREFIX: benchPrefix('signin'),
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'silent',
    SEED_DEMO: '0',
  });
  const runtime = createRuntime(config, { name: 'bench-sign-in', dbPoolSize: 10 });
  let failed = false;
  try {
    await waitFor(() => runtime.redis.status === 'ready', 5000, 'Redis');
    console.log(`sign-in benchmark: ${new Date().toISOString()}, node ${process.version}`);
    const users = Math.ceil(RATE * (SECONDS + WARMUP_MS / 1000)) + 10;
    const passwordHash = await hashPassword(PASSWORD);
    for (let i = 0; i < users; i++) {
      await runtime.db
        .transaction()
        .execute((tx) => createUser(tx, systemClock, { email: `bench${i}@example.com`, passwordHash, credits: 100 }, { ip: null }));
    }
    console.log(`seeded ${users} users`);

    const floor: number[] = [];
    for (let i = 0; i < 50; i++) {
      const started = performance.now();
      if (!(await verifyPassword(passwordHash, PASSWORD))) throw new Error('argon2 verification failed');
      floor.push(performance.now() - started);
    }

    await sql`create table bench_commit_probe (x int)`.execute(runtime.db);
    const commits: number[] = [];
    for (let i = 0; i < 100; i++) {
      const started = performance.now();
      await sql`insert into bench_commit_probe values (${i})`.execute(runtime.db);
      commits.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }

    const api = await serve(
      createApp({
        services: runtime.services,
        registry: runtime.registry,
        limiter: new RedisRateLimiter(runtime.redis, config.redisPrefix),
        redis: runtime.redis,
      }),
    );
    try {
      const report = await runLoad({
        mode: 'open',
        baseUrl: api.url,
        path: '/v1/auth/login',
        headers: { 'Content-Type': 'application/json' },
        bodyTemplate: JSON.stringify({ email: 'bench{i}@example.com', password: PASSWORD }),
        rate: RATE,
        warmupMs: WARMUP_MS,
        durationMs: SECONDS * 1000,
        okStatus: 200,
      });
      if (report.ok !== report.sent)
        throw new Error(`${report.sent - report.ok} sign-ins failed: ${JSON.stringify(report.statuses)} ${report.firstError ?? ''}`);
      const s = summarize(report.latencies);
      const base = summarize(floor);
      const commit = summarize(commits);
      const ok = s.p99 < TARGET_P99_MS;
      failed = !ok;
      console.log(
        table([
          ['measure', 'count', 'p50 ms', 'p99 ms', 'max ms', 'target', 'result'],
          ['baseline: argon2id verify, in process', String(base.count), ms(base.p50), ms(base.p99), ms(base.max), '', ''],
          ['baseline: a durable INSERT commit', String(commit.count), ms(commit.p50), ms(commit.p99), ms(commit.max), '', ''],
          [`POST /v1/auth/login at ${RATE}/s`, String(s.count), ms(s.p50), ms(s.p99), ms(s.max), `p99 < ${TARGET_P99_MS}`, verdict(ok)],
        ]),
      );
      console.log(`p90 ${ms(s.p90)} ms; p99 / baseline p99: ${(s.p99 / base.p99).toFixed(2)}`);
      if (process.env.BENCH_TRACE) console.log(report.latencies.map((v) => v.toFixed(0)).join(' '));
    } finally {
      await api.close();
    }
  } finally {
    await runtime.close();
    await database.drop();
  }
  if (failed) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
