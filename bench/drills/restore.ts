/**
 * Drill: restore the database to a point in time, and start the service on it with an empty Redis.
 *
 * A private Postgres with WAL archiving on (bench/drills/lib/pitr.ts) and a private Redis; the
 * api and worker processes on them; clients submitting jobs over HTTP (a third of them slow, so
 * jobs are queued and running at every moment). Under that load: a base backup (pg_basebackup);
 * more work; a named restore point (pg_create_restore_point), its time noted; more work; the
 * WAL archived. Then the bad day: the primary and its Redis are gone. A second cluster is
 * restored from the base backup and the archive to the restore point, and the api and worker
 * start on it with a new, empty Redis (same deployment). Redis is also given entries for jobs
 * the restored database does not know (those admitted after the restore point), as a Redis
 * that outlived its database would hold.
 *
 * Checks: every job accepted before the restore point is in the restored database, none sent
 * after it is; the reconcilers re-queue every job that was queued or running at the restore
 * point and each finishes; a job settled at the restore point is not run again (its row and
 * ledger as restored); jobs the restore did not know are not charged and not created (no ledger
 * entry without its job); the API answers 404 for a job lost with the window; no service
 * process died; the ledger audit is exact.
 *
 * With `PREVIOUS_RELEASE` (a version of CHANGELOG.md or a revision, as the upgrade drill takes
 * it: bench/drills/lib/previous-release.ts), the backup is one of the previous release: its
 * folder unpacked and installed, its schema made by its own migrations and its workspace by its
 * admin CLI, its api, worker and scheduler serving the load. After the restore to the named
 * point the upgrade follows, as an operator runs it: this checkout's migrations on the restored
 * database, then the contract step (`npm run admin -- reconcile-counters`), then this
 * checkout's api, worker and scheduler on the empty Redis. The same checks apply, the ledger
 * audit including every month-spend and balance counter.
 *
 *   npm run drill:restore                 # 12 clients, 6 s between the steps
 *   DRILL_CLIENTS=4 DRILL_GAP_MS=2000 npm run drill:restore
 *   PREVIOUS_RELEASE=6e61818 npm run drill:restore       # a backup of 0.9.0, restored and upgraded
 *   PREVIOUS_RELEASE=all DRILL_INSTALL=link npm run drill:restore
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { createDb, migrateToLatest } from '@sdx/db';
import { createApiKey, createWorkspace, systemClock } from '@sdx/domain/testing';
import { createRuntime, untilRedisReady } from '@sdx/runtime';
import { loadConfig } from '@sdx/config';
import { checkLedger, freePort, type LedgerReport, startPrivateRedis, TEST_SECRETS_KEY } from '@sdx/testing';
import { keepAliveAgent, send } from '../lib/http';
import { type AppName, type AppProcess, startApp } from './lib/processes';
import {
  type CounterFix,
  installRelease,
  type PreviousRelease,
  reconcileCounters,
  resolvePreviousReleases,
  setUpReleaseDatabase,
  unpackRelease,
} from './lib/previous-release';
import { type ArchivingPrimary, restoreCluster, startArchivingPrimary } from './lib/pitr';

export interface RestoreOptions {
  /** Concurrent submitting clients. */
  clients: number;
  /** Load between the steps (before the backup, between it and the restore point, after it). */
  gapMs: number;
  /** The release whose processes serve the load and whose database is backed up; absent: this checkout. */
  release?: PreviousRelease;
  /** How the previous release gets its node_modules: `npm ci` there, or links to this checkout's. */
  install?: 'ci' | 'link';
  log?: (line: string) => void;
}

export const DEFAULT_OPTIONS: RestoreOptions = { clients: 12, gapMs: 6000 };

export interface RestoreFigures {
  options: RestoreOptions;
  /** With a previous release: its install, and the upgrade of the restored database (migrations, contract step). */
  upgrade?: { installMs: number; migrationsApplied: string[]; migrateMs: number; countersMended: CounterFix[]; contractMs: number };
  accepted: { beforeBackup: number; duringBackup: number; beforeRestorePoint: number; afterRestorePoint: number; total: number };
  backup: { ms: number; bytes: number };
  /** Archived WAL segments when the primary was lost. */
  walSegments: number;
  restoreMs: number;
  restored: { jobs: number; queued: number; running: number; completed: number; other: number };
  /** Accepted before the restore point but missing from the restored database (must be 0). */
  missingFromRestore: number;
  /** Sent after the restore point but present in the restored database (must be 0). */
  unknownInRestore: number;
  /** Jobs the reconcilers reported re-queueing after the service started on the restored database. */
  reconciled: { requeued: number; enqueued: number };
  /** Service start → the reconcilers re-queued as many jobs as were in flight, and → every job finished. */
  requeueMs: number;
  finishMs: number;
  /** Service start → the worker consuming, and → its reconciler's first pass that re-queued something. */
  workerUpMs: number;
  firstPassMs: number;
  /** Jobs in flight at the restore point that ended completed. */
  inFlightFinished: number;
  /** Jobs settled at the restore point whose row or ledger changed afterwards (must be 0). */
  settledRerun: number;
  /** Queue entries given for jobs the restored database does not know, and rows or ledger entries they made (must be 0). */
  strangers: { entries: number; rows: number; ledger: number };
  /** Ledger entries naming a job that does not exist (must be 0). */
  orphanLedger: number;
  /** Lost jobs the API answers 404 for, of those asked. */
  lostAnswered404: { asked: number; notFound: number };
  deaths: string[];
  audit: LedgerReport;
  failures: string[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Accepted {
  id: string;
  sentAt: number;
  acceptedAt: number;
}

export async function runRestoreDrill(options: RestoreOptions = DEFAULT_OPTIONS): Promise<RestoreFigures> {
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const primary: ArchivingPrimary = await startArchivingPrimary();
  const redisA = await startPrivateRedis();
  let redisB: Awaited<ReturnType<typeof startPrivateRedis>> | null = null;
  let restored: Awaited<ReturnType<typeof restoreCluster>> | null = null;
  const apps: AppProcess[] = [];
  const agent: http.Agent = keepAliveAgent(64);
  const release = options.release;
  // The previous release's folder (removed at the end); its processes serve until the bad day.
  const unpacked = release ? mkdtempSync(path.join(os.tmpdir(), 'sdx-restore-')) : null;
  try {
    const database = 'social_data';
    await primary.query('postgres', `create database ${database}`);
    const port = await freePort();
    const baseEnv = {
      NODE_ENV: 'production',
      SECRETS_KEY: TEST_SECRETS_KEY,
      PROVIDER_MODE: 'sandbox',
      REDIS_PREFIX: 'drill',
      DEPLOYMENT_ID: 'drill',
      PORT: String(port),
      LOG_LEVEL: 'info',
      SANDBOX_LATENCY_MS: '20',
      HEARTBEAT_INTERVAL_MS: '500',
      HEARTBEAT_TIMEOUT_MS: '3000',
      RECONCILE_INTERVAL_MS: '1000',
      JOB_RETRY_BASE_MS: '200',
      WORKER_CONCURRENCY: '4',
    };
    const envA = { ...baseEnv, DATABASE_URL: primary.url(database), REDIS_URL: redisA.url };
    let installMs = 0;
    let workspaceId: string;
    let apiKey: string;
    if (release && unpacked) {
      log(`${release.note} (${release.sha.slice(0, 12)})`);
      const installStarted = Date.now();
      unpackRelease(release.sha, unpacked);
      installRelease(unpacked, options.install ?? 'ci');
      installMs = Date.now() - installStarted;
      log(`previous release unpacked and installed (${options.install ?? 'ci'}) in ${installMs} ms at ${unpacked}`);
      // Its schema by its own migrations, its workspace by its admin CLI.
      ({ workspaceId, apiKey } = setUpReleaseDatabase(unpacked, envA, 'Drill'));
    } else {
      const setupDb = createDb({ connectionString: primary.url(database), max: 2, applicationName: 'drill' });
      await migrateToLatest(setupDb);
      ({ workspaceId, apiKey } = await setupDb.transaction().execute(async (tx) => {
        const workspace = await createWorkspace(tx, systemClock, {
          name: 'Drill',
          credits: 100_000_000,
          rateLimitPerMinute: 1_000_000,
          maxActiveJobs: 1_000_000,
          maxResultLimit: 25_000,
        });
        const key = await createApiKey(tx, workspace.id, 'drill');
        return { workspaceId: workspace.id, apiKey: key.api_key };
      }));
      await setupDb.destroy();
    }
    log(`primary Postgres on :${primary.port} archiving to ${primary.archive}; Redis on :${redisA.port}; workspace ${workspaceId}`);
    // With a previous release the whole fleet (the scheduler too), as an upgrade finds it.
    const fleet: AppName[] = release ? ['api', 'worker', 'scheduler'] : ['api', 'worker'];
    for (const app of fleet) apps.push(startApp(app, envA, unpacked ?? undefined));
    const base = `http://127.0.0.1:${port}`;
    const auth = { 'X-API-Key': apiKey };
    await untilReady(agent, base, apps);

    // The load: each client submits job after job; every third is slow (1.5 s a page).
    let loading = true;
    let submitted = 0;
    const accepted: Accepted[] = [];
    const refused: Record<string, number> = {};
    const client = async (id: number) => {
      while (loading) {
        const n = submitted++;
        const slow = n % 3 === 0 ? '_sandbox_slow_1500' : '';
        const sentAt = Date.now();
        const reply = await send(agent, base, {
          method: 'POST',
          path: '/v1/jobs',
          headers: { ...auth, 'Idempotency-Key': `restore-${id}-${n}`, 'Cache-Control': 'no-cache' },
          body: JSON.stringify({ platform: 'instagram', operation: 'posts', target: `restore_${id}_${n}${slow}`, limit: 5 }),
        }).catch(() => null);
        if (reply?.status === 202) accepted.push({ id: (JSON.parse(reply.body) as { id: string }).id, sentAt, acceptedAt: Date.now() });
        else refused[String(reply?.status ?? 'no answer')] = (refused[String(reply?.status ?? 'no answer')] ?? 0) + 1;
        await sleep(100);
      }
    };
    const load = Array.from({ length: options.clients }, (_, i) => client(i));

    await sleep(options.gapMs);
    const backupStarted = Date.now();
    const backupDir = path.join(primary.dir, 'base');
    const backupBytes = await primary.baseBackup(backupDir);
    const backupEnded = Date.now();
    log(`base backup under load: ${backupEnded - backupStarted} ms, ${(backupBytes / 1e6).toFixed(1)} MB`);

    await sleep(options.gapMs);
    const pointStarted = Date.now();
    await primary.query('postgres', `select pg_create_restore_point('drill')`);
    const pointAt = Date.now();
    log(`restore point 'drill' at ${new Date(pointAt).toISOString()}`);

    await sleep(options.gapMs);
    loading = false;
    await Promise.all(load);
    await primary.archiveCurrentWal();
    const walSegments = (await primary.query<{ n: number }>('postgres', `select archived_count::int as n from pg_stat_archiver`))[0].n;

    // The bad day: the primary and its Redis are lost, the processes with them.
    for (const app of apps.splice(0)) await app.stop('SIGKILL');
    await primary.stop('immediate');
    await redisA.destroy();

    const restoreStarted = Date.now();
    restored = await restoreCluster(primary, backupDir, { name: 'drill' });
    const restoreMs = Date.now() - restoreStarted;
    log(`restored to 'drill' in ${restoreMs} ms on :${restored.port}`);
    const dbB = createDb({ connectionString: restored.url(database), max: 4, applicationName: 'drill' });
    const envB = { ...envA, DATABASE_URL: restored.url(database) };
    let upgrade: RestoreFigures['upgrade'];
    if (release) {
      // The upgrade of the restored database, before any process of this checkout starts on it:
      // this checkout's migrations, then the contract step.
      const migrateStarted = Date.now();
      const migrationsApplied = await migrateToLatest(dbB);
      const migrateMs = Date.now() - migrateStarted;
      log(`migrations on the restored database in ${migrateMs} ms: ${migrationsApplied.join(', ') || 'none'}`);
      const contractStarted = Date.now();
      const contract = reconcileCounters(envB);
      const contractMs = Date.now() - contractStarted;
      log(`contract step: ${contract.workspaces} balances checked, ${contract.fixes.length} counters mended`);
      upgrade = { installMs, migrationsApplied, migrateMs, countersMended: contract.fixes, contractMs };
    }
    const atRestore = await dbB.selectFrom('jobs').select(['id', 'status', 'attempts', 'finished_at', 'billed_credits']).execute();
    const restoredIds = new Set(atRestore.map((j) => j.id));
    const settled = atRestore.filter((j) => j.status === 'completed');
    const settledLedger = await dbB
      .selectFrom('credit_ledger')
      .select(['job_id'])
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('job_id', 'in', settled.length ? settled.map((j) => j.id) : ['none'])
      .groupBy('job_id')
      .execute();
    const inFlight = atRestore.filter((j) => j.status === 'queued' || j.status === 'running').map((j) => j.id);
    const lost = accepted.filter((a) => !restoredIds.has(a.id));

    // The service on the restored database, with a new, empty Redis (the same deployment).
    redisB = await startPrivateRedis();
    Object.assign(envB, { REDIS_URL: redisB.url });
    // A Redis that outlived its database: entries of jobs the restored database does not know.
    const configB = loadConfig({ ...envB, LOG_LEVEL: 'silent' });
    const producer = createRuntime(configB, { name: 'drill-producer', dbPoolSize: 2, env: envB });
    await untilRedisReady(producer);
    const strangers = lost.map((a) => a.id);
    await producer.queues.enqueueMany(strangers.map((jobId) => ({ jobId, attempt: 1, batchChild: false })));
    await producer.close();

    const serviceStarted = Date.now();
    for (const app of fleet) apps.push(startApp(app, envB));
    await untilReady(agent, base, apps);
    let finishedAt = 0;
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const open = await dbB.selectFrom('jobs').select('id').where('status', 'in', ['queued', 'running']).execute();
      if (open.length === 0) {
        finishedAt = Date.now();
        break;
      }
      await sleep(100);
    }
    const answers = await Promise.all(
      lost.slice(0, 20).map((a) =>
        send(agent, base, { method: 'GET', path: `/v1/jobs/${a.id}`, headers: auth }).then(
          (r) => r.status,
          () => 0,
        ),
      ),
    );
    const after = await dbB.selectFrom('jobs').select(['id', 'status', 'attempts', 'finished_at', 'billed_credits']).execute();
    const byId = new Map(after.map((j) => [j.id, j]));
    const ledgerAfter = await dbB
      .selectFrom('credit_ledger')
      .select(['job_id'])
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('job_id', 'in', settled.length ? settled.map((j) => j.id) : ['none'])
      .groupBy('job_id')
      .execute();
    const ledgerBefore = new Map(settledLedger.map((l) => [l.job_id, Number(l.n)]));
    const settledRerun = settled.filter((j) => {
      const now = byId.get(j.id);
      const entries = Number(ledgerAfter.find((l) => l.job_id === j.id)?.n ?? 0);
      return (
        !now ||
        now.status !== 'completed' ||
        now.attempts !== j.attempts ||
        now.finished_at?.getTime() !== j.finished_at?.getTime() ||
        entries !== ledgerBefore.get(j.id)
      );
    }).length;
    const strangerRows = strangers.filter((id) => byId.has(id)).length;
    const strangerLedger = Number(
      (
        await dbB
          .selectFrom('credit_ledger')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('job_id', 'in', strangers.length ? strangers : ['none'])
          .executeTakeFirstOrThrow()
      ).n,
    );
    const { rows: orphans } = await sql<{ n: number }>`
      select count(*)::int as n from credit_ledger l where l.job_id is not null and not exists (select 1 from jobs j where j.id = l.job_id)
    `.execute(dbB);
    const audit = await checkLedger(dbB);
    await dbB.destroy();
    const reconciled = { requeued: 0, enqueued: 0 };
    let workerUpAt = 0;
    let firstPassAt = 0;
    // Re-queued: when the reconcilers' passes (running jobs handed back, queued jobs' entries added) reach the jobs in flight.
    let requeuedAt = 0;
    for (const app of apps) {
      for (const line of app.lines) {
        if (line.includes('"worker started"') && !workerUpAt) workerUpAt = Number((JSON.parse(line) as { time?: number }).time ?? 0);
        if (!line.includes('reconciled jobs')) continue;
        const record = JSON.parse(line) as { requeued?: number; enqueued?: number; time?: number };
        if (!firstPassAt) firstPassAt = Number(record.time ?? 0);
        reconciled.requeued += Number(record.requeued ?? 0);
        reconciled.enqueued += Number(record.enqueued ?? 0);
        if (!requeuedAt && reconciled.requeued + reconciled.enqueued >= inFlight.length) requeuedAt = Number(record.time ?? 0);
      }
    }
    for (const app of apps) await app.stop();

    const figures: RestoreFigures = {
      options,
      ...(upgrade ? { upgrade } : {}),
      accepted: {
        beforeBackup: accepted.filter((a) => a.acceptedAt < backupStarted).length,
        duringBackup: accepted.filter((a) => a.acceptedAt >= backupStarted && a.acceptedAt <= backupEnded).length,
        beforeRestorePoint: accepted.filter((a) => a.acceptedAt < pointStarted).length,
        afterRestorePoint: accepted.filter((a) => a.sentAt > pointAt).length,
        total: accepted.length,
      },
      backup: { ms: backupEnded - backupStarted, bytes: backupBytes },
      walSegments,
      restoreMs,
      restored: {
        jobs: atRestore.length,
        queued: atRestore.filter((j) => j.status === 'queued').length,
        running: atRestore.filter((j) => j.status === 'running').length,
        completed: settled.length,
        other: atRestore.filter((j) => !['queued', 'running', 'completed'].includes(j.status)).length,
      },
      missingFromRestore: accepted.filter((a) => a.acceptedAt < pointStarted && !restoredIds.has(a.id)).length,
      unknownInRestore: accepted.filter((a) => a.sentAt > pointAt && restoredIds.has(a.id)).length,
      reconciled,
      requeueMs: requeuedAt ? requeuedAt - serviceStarted : Number.POSITIVE_INFINITY,
      finishMs: finishedAt ? finishedAt - serviceStarted : Number.POSITIVE_INFINITY,
      workerUpMs: workerUpAt ? workerUpAt - serviceStarted : Number.NaN,
      firstPassMs: firstPassAt ? firstPassAt - serviceStarted : Number.NaN,
      inFlightFinished: inFlight.filter((id) => byId.get(id)?.status === 'completed').length,
      settledRerun,
      strangers: { entries: strangers.length, rows: strangerRows, ledger: strangerLedger },
      orphanLedger: orphans[0]?.n ?? 0,
      lostAnswered404: { asked: answers.length, notFound: answers.filter((s) => s === 404).length },
      deaths: apps.filter((a) => a.died).map((a) => `${a.app} (${a.died!.signal ?? a.died!.code})`),
      audit,
      failures: [],
    };
    figures.failures = judge(figures, inFlight.length, refused);
    return figures;
  } finally {
    agent.destroy();
    for (const app of apps) await app.stop('SIGKILL').catch(() => undefined);
    await redisB?.destroy().catch(() => undefined);
    await redisA.destroy().catch(() => undefined);
    await restored?.destroy().catch(() => undefined);
    await primary.destroy().catch(() => undefined);
    if (unpacked) rmSync(unpacked, { recursive: true, force: true });
  }
}

async function untilReady(agent: http.Agent, base: string, apps: AppProcess[]): Promise<void> {
  const by = Date.now() + 60_000;
  while ((await send(agent, base, { method: 'GET', path: '/readyz' }).catch(() => null))?.status !== 200) {
    if (Date.now() > by) throw new Error(`the service did not become ready: ${apps.flatMap((a) => a.lines.slice(-5)).join('\n')}`);
    await sleep(100);
  }
}

function judge(f: RestoreFigures, inFlight: number, refused: Record<string, number>): string[] {
  const failures: string[] = [];
  if (Object.keys(refused).length > 0) failures.push(`submissions refused before the fault: ${JSON.stringify(refused)}`);
  if (f.accepted.afterRestorePoint === 0)
    failures.push('no job was accepted after the restore point: the drill lost nothing it could check');
  if (inFlight === 0) failures.push('no job was in flight at the restore point: the drill re-queued nothing it could check');
  if (f.missingFromRestore > 0)
    failures.push(`${f.missingFromRestore} jobs accepted before the restore point are missing from the restored database`);
  if (f.unknownInRestore > 0) failures.push(`${f.unknownInRestore} jobs sent after the restore point are in the restored database`);
  if (!Number.isFinite(f.requeueMs)) failures.push('the reconcilers did not re-queue every job in flight at the restore point');
  if (!Number.isFinite(f.finishMs)) failures.push('jobs of the restored database did not all finish within 120 s');
  if (f.inFlightFinished !== inFlight)
    failures.push(`${inFlight - f.inFlightFinished} of ${inFlight} jobs in flight at the restore point did not complete`);
  if (f.settledRerun > 0) failures.push(`${f.settledRerun} jobs settled at the restore point were run or settled again`);
  if (f.strangers.rows > 0 || f.strangers.ledger > 0)
    failures.push(`entries of jobs the restore did not know made ${f.strangers.rows} rows and ${f.strangers.ledger} ledger entries`);
  if (f.orphanLedger > 0) failures.push(`${f.orphanLedger} ledger entries name no job`);
  if (f.lostAnswered404.notFound !== f.lostAnswered404.asked)
    failures.push(`lost jobs: ${f.lostAnswered404.notFound} of ${f.lostAnswered404.asked} answered 404`);
  if (f.deaths.length > 0) failures.push(`processes died: ${f.deaths.join(', ')}`);
  if (f.audit.problems.length > 0) failures.push(`ledger audit: ${f.audit.problems.slice(0, 10).join('; ')}`);
  if (f.audit.active > 0) failures.push(`${f.audit.active} jobs still active`);
  return failures;
}

export function summarizeRestore(f: RestoreFigures): string {
  const s = (ms: number) => (ms / 1000).toFixed(2);
  const upgrade =
    f.upgrade && f.options.release
      ? [
          `backup of ${f.options.release.rev} (${f.options.release.sha.slice(0, 12)}), served by its own processes; install ${f.upgrade.installMs} ms`,
          `upgrade of the restored database: ${f.upgrade.migrationsApplied.length} migrations in ${s(f.upgrade.migrateMs)} s (${f.upgrade.migrationsApplied.join(', ') || 'none'}); contract step in ${s(f.upgrade.contractMs)} s: ${f.upgrade.countersMended.length} counters mended${f.upgrade.countersMended.length ? ` (${f.upgrade.countersMended.map((c) => `${c.counter}${c.key_id ? ` of ${c.key_id}` : ''} ${c.was} -> ${c.now}`).join(', ')})` : ''}; the audit below is after it`,
        ]
      : [];
  return [
    ...upgrade,
    `jobs accepted: ${f.accepted.total} (${f.accepted.beforeBackup} before the backup, ${f.accepted.duringBackup} during it, ${f.accepted.beforeRestorePoint} before the restore point, ${f.accepted.afterRestorePoint} sent after it)`,
    `base backup under load: ${s(f.backup.ms)} s, ${(f.backup.bytes / 1e6).toFixed(1)} MB; WAL segments archived: ${f.walSegments}`,
    `restore to the named point (copy + WAL replay + promotion): ${s(f.restoreMs)} s`,
    `restored jobs: ${f.restored.jobs} (${f.restored.completed} completed, ${f.restored.queued} queued, ${f.restored.running} running, ${f.restored.other} other); missing from it ${f.missingFromRestore}, unknown to it but present ${f.unknownInRestore}`,
    `service on the restored database with an empty Redis: worker up ${s(f.workerUpMs)} s after start, its reconciler's first re-queue at ${s(f.firstPassMs)} s; every in-flight job re-queued at ${s(f.requeueMs)} s, all finished at ${s(f.finishMs)} s; reconcilers: ${f.reconciled.requeued} running jobs re-queued, ${f.reconciled.enqueued} entries added; in flight at the restore point and completed: ${f.inFlightFinished}`,
    `settled at the restore point and run again: ${f.settledRerun}; entries for unknown jobs: ${f.strangers.entries} → ${f.strangers.rows} rows, ${f.strangers.ledger} ledger entries; ledger entries naming no job: ${f.orphanLedger}`,
    `lost jobs (accepted after the restore point) answered 404: ${f.lostAnswered404.notFound}/${f.lostAnswered404.asked}; process deaths: ${f.deaths.length}`,
    `ledger: ${f.audit.jobs + f.audit.cached} jobs: ${f.audit.completed} completed (${f.audit.billed} credits billed), ${f.audit.failed} failed, ${f.audit.cancelled} cancelled, ${f.audit.active} active; ${f.audit.problems.length} problems`,
  ].join('\n');
}

if (require.main === module) {
  const main = async () => {
    // PREVIOUS_RELEASE: a backup of that release (`all`: of each of the last three in turn), restored and upgraded.
    const releases = process.env.PREVIOUS_RELEASE?.trim() ? resolvePreviousReleases() : [undefined];
    const results: Array<{ rev: string; failures: string[] }> = [];
    for (const release of releases) {
      const figures = await runRestoreDrill({
        clients: Number(process.env.DRILL_CLIENTS ?? DEFAULT_OPTIONS.clients),
        gapMs: Number(process.env.DRILL_GAP_MS ?? DEFAULT_OPTIONS.gapMs),
        ...(release ? { release, install: process.env.DRILL_INSTALL === 'link' ? ('link' as const) : ('ci' as const) } : {}),
      });
      process.stdout.write(`${summarizeRestore(figures)}\n`);
      process.stdout.write(figures.failures.length > 0 ? `FAILED:\n- ${figures.failures.join('\n- ')}\n` : 'PASSED\n');
      results.push({ rev: release?.rev ?? 'this checkout', failures: figures.failures });
    }
    if (results.length > 1)
      process.stdout.write(`from each release: ${results.map((r) => `${r.rev} ${r.failures.length ? 'FAILED' : 'passed'}`).join(', ')}\n`);
    return results.every((r) => r.failures.length === 0);
  };
  main()
    .then((ok) => process.exit(ok ? 0 : 1))
    .catch((error) => {
      console.error(error);
      process.exit(1);
    });
}
