/**
 * What the fault drills share: a private Postgres cluster and redis-server (never the shared
 * servers), a migrated database, service processes started from apps/* as in production, and
 * the report (figures, checks, exit code).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '@sdx/config';
import { createDb, migrateToLatest } from '@sdx/db';
import { createRuntime, type Runtime, untilRedisReady } from '@sdx/runtime';
import {
  checkLedger,
  type LedgerReport,
  type PrivatePostgres,
  type PrivateRedis,
  startPrivatePostgres,
  startPrivateRedis,
  TEST_SECRETS_KEY,
} from '@sdx/testing';

export const ROOT = path.resolve(__dirname, '../..');

export interface DrillEnvironment {
  postgres: PrivatePostgres;
  redis: PrivateRedis;
  databaseUrl: string;
  prefix: string;
  /** Environment of the service processes (and of this process's runtime). */
  env: Record<string, string>;
  runtime: Runtime;
  destroy(): Promise<void>;
}

export async function startDrillEnvironment(label: string, env: Record<string, string> = {}): Promise<DrillEnvironment> {
  const postgres = await startPrivatePostgres();
  const redis = await startPrivateRedis();
  const databaseUrl = await postgres.createDatabase(`sdx_drill_${label}`);
  const db = createDb({ connectionString: databaseUrl, max: 1 });
  await migrateToLatest(db);
  await db.destroy();
  const prefix = `drill${randomBytes(3).toString('hex')}`;
  const fullEnv = {
    NODE_ENV: 'production',
    SECRETS_KEY: TEST_SECRETS_KEY,
    PROVIDER_MODE: 'sandbox',
    DATABASE_URL: databaseUrl,
    REDIS_URL: redis.url,
    REDIS_PREFIX: prefix,
    LOG_LEVEL: 'info',
    ...env,
  };
  const config = loadConfig({ ...fullEnv, LOG_LEVEL: 'silent' });
  // This process's runtime chooses its providers from the drill's environment, as the service processes do.
  const runtime = createRuntime(config, { name: `drill-${label}`, dbPoolSize: 20, env: fullEnv });
  await untilRedisReady(runtime);
  return {
    postgres,
    redis,
    databaseUrl,
    prefix,
    env: fullEnv,
    runtime,
    async destroy() {
      await runtime.close().catch(() => undefined);
      await redis.destroy().catch(() => undefined);
      await postgres.destroy().catch(() => undefined);
    },
  };
}

export interface ServiceProcess {
  name: string;
  proc: ChildProcess;
  /** stdout and stderr so far. */
  output(): string;
  /** JSON log lines so far. */
  logs(): Array<Record<string, unknown>>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  alive(): boolean;
  /** Signals the process (only this one, by its PID) and waits for it to exit. */
  stop(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `apps/<app>/src/main.ts` as its own node process (tsx's loader), as `npm run start:<app>` would. */
export function startService(app: 'worker' | 'scheduler' | 'api', env: Record<string, string>, name: string = app): ServiceProcess {
  const proc = spawn(process.execPath, ['--import', 'tsx', `apps/${app}/src/main.ts`], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
  });
  let text = '';
  proc.stdout?.on('data', (d: Buffer) => (text += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (text += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    name,
    proc,
    output: () => text,
    logs: () =>
      text
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .flatMap((line) => {
          try {
            return [JSON.parse(line) as Record<string, unknown>];
          } catch {
            return [];
          }
        }),
    exited,
    alive: () => proc.exitCode === null && proc.signalCode === null,
    async stop(signal) {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function waitUntil<T>(
  check: () => T | null | undefined | false | Promise<T | null | undefined | false>,
  timeoutMs: number,
  what: string,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(intervalMs);
  }
}

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

/** Prints the drill's figures and checks (the ledger's among them); sets the exit code. */
export function report(title: string, figures: Record<string, string | number>, checks: Check[], ledger: LedgerReport): boolean {
  console.log(`\n${title}`);
  for (const [name, value] of Object.entries(figures)) console.log(`  ${name.padEnd(44)} ${value}`);
  const all: Check[] = [
    ...checks,
    {
      name: 'ledger exact (each job reserved once; billed once or released)',
      ok: ledger.problems.length === 0,
      detail: `${ledger.jobs} jobs: ${ledger.completed} completed (${ledger.billed} credits billed), ${ledger.failed} failed, ${ledger.cancelled} cancelled, ${ledger.active} active; ${ledger.problems.length} problems${ledger.problems.length ? `: ${ledger.problems.slice(0, 5).join('; ')}` : ''}`,
    },
  ];
  for (const check of all) console.log(`  ${check.ok ? 'PASS' : 'FAIL'}  ${check.name}: ${check.detail}`);
  const ok = all.every((c) => c.ok);
  console.log(ok ? 'drill passed' : 'drill FAILED');
  if (!ok) process.exitCode = 1;
  return ok;
}

export { checkLedger };
