/**
 * Scheduler benchmark: 10,000 schedules due at the same instant, in a fresh database; the time
 * until every occurrence is dispatched (its job created, credits reserved, queue entry added),
 * with one and with two scheduler processes, and the number of duplicate dispatches (must be 0).
 *
 * Setup: a database is created and migrated once, then cloned (CREATE DATABASE ... TEMPLATE)
 * for each scenario; 100 workspaces with ample credits are created, and 10,000 daily `profile`
 * schedules (one target each, spread over them) inserted with raw SQL, all with next_run_at =
 * the same instant.
 * Each scheduler process is a child of this script running the real engine (dispatchAllDue,
 * what one pass of the scheduler's `schedule-dispatch` background task does); timing starts when every child has connected and is told
 * to go, and ends when the last run is dispatched.
 *
 * Target: all dispatched within 30 s. Exits with code 1 on a miss, a duplicate or a timeout.
 *
 * Run: npm run bench:scheduler   (BENCH_SCHEDULES=2000 for a quicker run; BENCH_CPU_PROF=dir
 *      writes a CPU profile of each scheduler process; BENCH_CONCURRENCY=n dispatches n at once
 *      per process instead of the engine's default)
 * Uses DATABASE_URL's server (default local Postgres) and REDIS_URL.
 */
import { fork, type ChildProcess } from 'child_process';
import { randomBytes } from 'crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { loadConfig } from '@sdx/config';
import { createDb, migrateToLatest } from '@sdx/db';
import { createWorkspace, newId, systemClock } from '@sdx/domain/testing';
import { createRuntime, untilRedisReady } from '@sdx/runtime';
import { dispatchAllDue } from '@sdx/scheduler-engine';

const SCHEDULES = Number(process.env.BENCH_SCHEDULES ?? 10_000);
const WORKSPACES = 100;
const TARGET_MS = 30_000;
const TIMEOUT_MS = 180_000;

const serverUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0';

function urlFor(name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: urlFor('postgres') });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------- child: one scheduler process

interface ChildMessage {
  kind: 'ready' | 'done';
  dispatched?: number;
}

async function child(): Promise<void> {
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent' });
  const runtime = createRuntime(config, { name: `bench-scheduler-${process.pid}`, dbPoolSize: 20 });
  await sql`select 1`.execute(runtime.db);
  await untilRedisReady(runtime);
  process.send!({ kind: 'ready' } satisfies ChildMessage);
  await new Promise<void>((resolve) => process.once('message', () => resolve()));
  // What each pass of the `schedule-dispatch` task does: claim and dispatch rounds until nothing is due.
  const concurrency = process.env.BENCH_CONCURRENCY ? Number(process.env.BENCH_CONCURRENCY) : undefined;
  const { runs } = await dispatchAllDue(runtime.services, { concurrency });
  const dispatched = runs.length;
  process.send!({ kind: 'done', dispatched } satisfies ChildMessage);
  await runtime.close();
  process.exit(0);
}

// ---------------------------------------------------------------- parent

async function seed(databaseUrl: string, due: Date): Promise<void> {
  const db = createDb({ connectionString: databaseUrl, max: 4 });
  try {
    const workspaces: string[] = [];
    await db.transaction().execute(async (tx) => {
      for (let i = 0; i < WORKSPACES; i++) {
        const ws = await createWorkspace(tx, systemClock, { name: `bench ${i}`, credits: 1_000_000, maxActiveJobs: 100_000 });
        workspaces.push(ws.id);
      }
    });
    for (let start = 0; start < SCHEDULES; start += 1000) {
      const rows = [];
      for (let i = start; i < Math.min(SCHEDULES, start + 1000); i++) {
        rows.push({
          id: newId('sch'),
          workspace_id: workspaces[i % WORKSPACES],
          name: `bench ${i}`,
          platform: 'instagram',
          operation: 'profile',
          targets: JSON.stringify([`bench_user_${i}`]),
          requested_limit: 1,
          frequency: 'daily' as const,
          timezone: 'America/New_York',
          starts_at: due,
          starts_at_text: due.toISOString(),
          next_run_at: due,
          status: 'active' as const,
        });
      }
      await db.insertInto('schedules').values(rows).execute();
    }
  } finally {
    await db.destroy();
  }
}

interface Figures {
  engines: number;
  ms: number;
  runs: number;
  dispatched: number;
  jobs: number;
  duplicates: number;
  missed: number;
  perEngine: number[];
}

async function scenario(template: string, engines: number, prefix: string): Promise<Figures> {
  const name = `sdx_bench_sched_${randomBytes(4).toString('hex')}`;
  await admin(`create database ${name} template ${template}`);
  const databaseUrl = urlFor(name);
  const children: ChildProcess[] = [];
  try {
    const due = new Date(Math.floor(Date.now() / 1000) * 1000 - 1000);
    await seed(databaseUrl, due);
    const env = { ...process.env, DATABASE_URL: databaseUrl, REDIS_URL: redisUrl, REDIS_PREFIX: prefix, BENCH_CHILD: '1' };
    const done: Array<Promise<number>> = [];
    const ready: Array<Promise<void>> = [];
    for (let i = 0; i < engines; i++) {
      const proc = fork(__filename, [], {
        env,
        execArgv: [
          ...process.execArgv,
          ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
        ],
      });
      children.push(proc);
      const exited = new Promise<never>((_, reject) =>
        proc.on('exit', (code) => reject(new Error(`scheduler process exited with ${code} before it finished`))),
      );
      exited.catch(() => undefined);
      ready.push(
        Promise.race([new Promise<void>((resolve) => proc.on('message', (m: ChildMessage) => m.kind === 'ready' && resolve())), exited]),
      );
      done.push(
        Promise.race([
          new Promise<number>((resolve) => proc.on('message', (m: ChildMessage) => m.kind === 'done' && resolve(m.dispatched ?? 0))),
          exited,
        ]),
      );
    }
    await Promise.all(ready);
    const started = performance.now();
    for (const proc of children) proc.send('go');
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timed out')), TIMEOUT_MS).unref());
    const perEngine = await Promise.race([Promise.all(done), timeout]);
    const ms = performance.now() - started;

    const db = createDb({ connectionString: databaseUrl, max: 1 });
    try {
      const { rows } = await sql<{
        runs: number;
        dispatched: number;
        occurrences: number;
        jobs: number;
        job_schedules: number;
        missed: number;
      }>`
        select
          (select count(*)::int from schedule_runs) as runs,
          (select count(*)::int from schedule_runs where status = 'queued' and job_id is not null and dispatched_at is not null) as dispatched,
          (select count(distinct (schedule_id, scheduled_for))::int from schedule_runs) as occurrences,
          (select count(*)::int from jobs) as jobs,
          (select count(distinct schedule_id)::int from jobs) as job_schedules,
          (select count(*)::int from schedules s where not exists (select 1 from schedule_runs r where r.schedule_id = s.id)) as missed
      `.execute(db);
      const r = rows[0];
      return {
        engines,
        ms,
        runs: r.runs,
        dispatched: r.dispatched,
        jobs: r.jobs,
        duplicates: r.runs - r.occurrences + (r.jobs - r.job_schedules),
        missed: r.missed,
        perEngine,
      };
    } finally {
      await db.destroy();
    }
  } finally {
    for (const proc of children) if (proc.exitCode === null) proc.kill('SIGKILL');
    await admin(`drop database if exists ${name} with (force)`);
  }
}

async function clearQueues(prefix: string): Promise<void> {
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: urlFor('postgres'),
    REDIS_URL: redisUrl,
    REDIS_PREFIX: prefix,
    LOG_LEVEL: 'silent',
  });
  const runtime = createRuntime(config, { name: 'bench-cleanup', dbPoolSize: 1 });
  await runtime.queues.jobs.obliterate({ force: true }).catch(() => undefined);
  await runtime.queues.batchChildren.obliterate({ force: true }).catch(() => undefined);
  await runtime.close();
}

async function main(): Promise<void> {
  const template = `sdx_bench_sched_tpl_${randomBytes(4).toString('hex')}`;
  await admin(`create database ${template}`);
  const prefix = `sdxbench${randomBytes(4).toString('hex')}`;
  const results: Figures[] = [];
  try {
    const db = createDb({ connectionString: urlFor(template), max: 1 });
    await migrateToLatest(db);
    await db.destroy();
    for (const engines of [1, 2]) {
      results.push(await scenario(template, engines, prefix));
      await clearQueues(prefix);
    }
  } finally {
    await admin(`drop database if exists ${template} with (force)`);
  }

  console.log(`scheduler bench: ${SCHEDULES} schedules due at one instant, ${WORKSPACES} workspaces, one job each`);
  let ok = true;
  for (const f of results) {
    const pass = f.dispatched === SCHEDULES && f.duplicates === 0 && f.missed === 0 && f.ms <= TARGET_MS;
    ok &&= pass;
    console.log(
      `  ${f.engines} scheduler process${f.engines > 1 ? 'es' : ''}: all dispatched in ${(f.ms / 1000).toFixed(2)} s ` +
        `(${Math.round((SCHEDULES / f.ms) * 1000)}/s); runs ${f.runs}, dispatched ${f.dispatched}, jobs ${f.jobs}, ` +
        `duplicates ${f.duplicates}, missed ${f.missed}, per process [${f.perEngine.join(', ')}] ${pass ? 'OK' : 'FAIL'}`,
    );
  }
  console.log(`target: every occurrence dispatched within ${TARGET_MS / 1000} s, 0 duplicates: ${ok ? 'met' : 'MISSED'}`);
  process.exit(ok ? 0 : 1);
}

if (process.env.BENCH_CHILD === '1') {
  child().catch((error) => {
    console.error(error);
    process.exit(1);
  });
} else {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
