/**
 * Drill: a rolling upgrade under load, from the previous release to this checkout.
 *
 * Takes the previous release from CHANGELOG.md and git (bench/drills/lib/previous-release.ts: the
 * newest release the changelog names before HEAD; `PREVIOUS_RELEASE=<version or rev>` picks
 * another, `PREVIOUS_RELEASE=all` runs the drill from each of the last three releases in turn), unpacks it into a temporary folder (`git archive`: the checkout and its .git are
 * not touched) and installs its dependencies there (`npm ci`, from npm's cache when it can).
 * On a private Postgres cluster and a private redis-server it migrates with the previous
 * release's migrations, makes the workspace with its admin CLI, and starts its api, worker and
 * scheduler. Under load (clients submitting jobs and batches, each with its Idempotency-Key and
 * resent after a 503 or a lost answer, and reading them back; a prober on GET /v1/account;
 * once-schedules falling due every second; a webhook taking every event to a loopback
 * receiver) it then runs this checkout's migrations and rolls the processes one at a time to
 * this checkout's code: the API (the new one started, traffic switched to it as a load
 * balancer does once it is ready, the old one sent SIGTERM), the worker (the new one started,
 * the old one drained), the scheduler (likewise).
 *
 * It passes when: no request failed but with 503 and Retry-After (no 5xx, no other status, no
 * lost connection); no process died, and each old one stopped with exit code 0; every accepted
 * job and batch exists and completed, and no job exists that no client was told of (no job
 * lost); the ledger audit is clean (no job billed twice); every webhook event reached the
 * receiver; every once-schedule was dispatched exactly once. After the roll it runs the
 * upgrade's contract step (`npm run admin -- reconcile-counters`: the money's counters
 * recomputed from the ledger) and the ledger audit then includes every month-spend and balance
 * counter. It prints the migrations the window saw and the counters the contract step mended.
 *
 *   npm run drill:upgrade
 *   PREVIOUS_RELEASE=v1.0.0 npm run drill:upgrade
 *   PREVIOUS_RELEASE=6e61818 npm run drill:upgrade
 *   PREVIOUS_RELEASE=all npm run drill:upgrade   # from each of the last three releases
 *   DRILL_PHASE_MS=8000 DRILL_CLIENTS=8 npm run drill:upgrade
 *   DRILL_INSTALL=link npm run drill:upgrade    # link this checkout's node_modules instead of npm ci
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { sql } from 'kysely';
import { createDb, type Db, migrateToLatest } from '@sdx/db';
import {
  checkLedger,
  freePort,
  type LedgerReport,
  startPrivatePostgres,
  startPrivateRedis,
  startWebhookReceiver,
  TEST_SECRETS_KEY,
} from '@sdx/testing';
import {
  installRelease,
  type PreviousRelease,
  REPO_ROOT,
  reconcileCounters,
  resolvePreviousRelease,
  resolvePreviousReleases,
  setUpReleaseDatabase,
  unpackRelease,
  workingTreeRelease,
} from './lib/previous-release';
import { unstructuredLines, warnings } from './lib/processes';

export interface UpgradeOptions {
  /** Concurrent clients submitting single jobs. */
  clients: number;
  /** Concurrent clients submitting batches of `batchSize` targets. */
  batchClients: number;
  batchSize: number;
  /** Load before the migration, after it, and after each process rolled. */
  phaseMs: number;
  /** Once-schedules, one falling due each second from the start of the load (default: until past the last roll). */
  schedules?: number;
  /** False: the previous release keeps serving on the migrated schema to the end (CI's subset); no process is rolled. */
  roll?: boolean;
  /** How the previous release gets its node_modules: `npm ci` there, or links to this checkout's. */
  install: 'ci' | 'link';
  /** The previous release; resolved from git when absent. */
  release?: PreviousRelease;
  log?: (line: string) => void;
}

export const DEFAULT_OPTIONS: UpgradeOptions = { clients: 8, batchClients: 2, batchSize: 4, phaseMs: 8000, install: 'ci' };

type AppName = 'api' | 'worker' | 'scheduler';
type Phase = 'old' | 'migrating' | 'migrated' | 'api rolled' | 'worker rolled' | 'all new';

export interface StepFigures {
  step: string;
  /** Start of the new process → ready (or the migration's run). */
  ms: number;
  /** The old process's SIGTERM → its exit, and its exit code (rolls only). */
  drainMs?: number;
  exitCode?: number | null;
}

export interface UpgradeFigures {
  release: PreviousRelease;
  installMs: number;
  migrationsApplied: string[];
  steps: StepFigures[];
  /** The counters the contract step found differing from the ledger, and what it set them to. */
  countersMended: Array<{ workspace_id: string; counter: string; key_id?: string; was: number; now: number }>;
  /** Counters the new workers' reconciler mended on its own before the contract step (from their warnings). */
  countersMendedByWorker: number;
  requests: number;
  byStatus: Record<string, number>;
  byPhase: Record<string, Record<string, number>>;
  /** Response times per phase: 99th percentile and slowest, ms. */
  latency: Record<string, { p99: number; max: number }>;
  connectionErrors: number;
  missingRetryAfter: number;
  submissions: { jobs: number; batches: number; batchJobs: number; replays: number; abandoned: number };
  jobs: { total: number; completed: number; notCompleted: number; lost: number; untold: number };
  schedules: { due: number; dispatchedOnce: number; dispatchedTwice: number };
  webhooks: { events: number; received: number; duplicates: number; missing: number; deliveriesDelivered: number };
  deaths: string[];
  unstructuredLogLines: number;
  audit: LedgerReport;
  failures: string[];
}

interface Sample {
  phase: Phase;
  status: number;
  retryAfter: boolean;
  ms: number;
}

interface Backend {
  base: string;
  agent: http.Agent;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One service process, started from `root` (the previous release's folder or this checkout). */
interface AppProcess {
  app: AppName;
  release: 'old' | 'new';
  child: ChildProcess;
  lines: string[];
  died: { code: number | null; signal: NodeJS.Signals | null } | null;
  /** SIGTERM, then the exit code (a graceful drain exits 0). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

function startApp(root: string, app: AppName, release: 'old' | 'new', env: Record<string, string>): AppProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join('apps', app, 'src', 'main.ts')], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stopping = false;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const proc: AppProcess = {
    app,
    release,
    child,
    lines: [],
    died: null,
    async stop(signal = 'SIGTERM') {
      stopping = true;
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
  for (const stream of [child.stdout, child.stderr]) createInterface({ input: stream }).on('line', (line) => proc.lines.push(line));
  child.on('exit', (code, signal) => {
    if (!stopping) proc.died = { code, signal };
  });
  return proc;
}

/** One request; null when the connection failed. */
function request(
  backend: Backend,
  method: 'GET' | 'POST',
  urlPath: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: string; retryAfter: string | null } | null> {
  return new Promise((resolve) => {
    const url = new URL(urlPath, backend.base);
    const all: Record<string, string | number> = { ...headers };
    if (body !== undefined) {
      all['content-type'] = 'application/json';
      all['content-length'] = Buffer.byteLength(body);
    }
    const req = http.request(
      { agent: backend.agent, host: url.hostname, port: url.port, path: url.pathname + url.search, method, headers: all },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            retryAfter: res.headers['retry-after'] ?? null,
          }),
        );
        res.on('error', () => resolve(null));
      },
    );
    req.on('error', () => resolve(null));
    if (body !== undefined) req.write(body);
    req.end();
  });
}

async function untilReady(url: string, proc: AppProcess, timeoutMs = 180_000): Promise<void> {
  const agent = new http.Agent({ keepAlive: false });
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      const reply = await request({ base: url, agent }, 'GET', '/readyz', {});
      if (reply?.status === 200) return;
      if (proc.died)
        throw new Error(`${proc.release} ${proc.app} exited (${proc.died.signal ?? proc.died.code}): ${proc.lines.slice(-10).join('\n')}`);
      if (Date.now() > deadline)
        throw new Error(`${proc.release} ${proc.app} not ready within ${timeoutMs} ms: ${proc.lines.slice(-10).join('\n')}`);
      await sleep(100);
    }
  } finally {
    agent.destroy();
  }
}

export async function runUpgradeDrill(options: UpgradeOptions = DEFAULT_OPTIONS): Promise<UpgradeFigures> {
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const release = options.release ?? resolvePreviousRelease() ?? workingTreeRelease();
  log(`${release.note}${release.sha ? ` (${release.sha.slice(0, 12)})` : ''}`);
  // The previous release's folder (removed at the end), or this checkout outside git.
  const unpacked = release.how === 'working-tree' ? null : mkdtempSync(path.join(os.tmpdir(), 'sdx-upgrade-'));
  const dir = unpacked ?? REPO_ROOT;
  const apps: AppProcess[] = [];
  const agents: http.Agent[] = [];
  const postgres = await startPrivatePostgres();
  const redis = await startPrivateRedis();
  const receiver = await startWebhookReceiver();
  let db: Db | null = null;
  try {
    const installStarted = Date.now();
    if (unpacked) {
      unpackRelease(release.sha, unpacked);
      installRelease(unpacked, options.install);
    }
    const installMs = Date.now() - installStarted;
    log(`previous release unpacked and installed (${options.install}) in ${installMs} ms at ${dir}`);

    const databaseUrl = await postgres.createDatabase('social_data');
    const base = {
      NODE_ENV: 'production',
      SECRETS_KEY: TEST_SECRETS_KEY,
      PROVIDER_MODE: 'sandbox',
      DATABASE_URL: databaseUrl,
      REDIS_URL: redis.url,
      REDIS_PREFIX: 'upgrade',
      LOG_LEVEL: 'warn',
      SANDBOX_LATENCY_MS: '20',
      HEARTBEAT_INTERVAL_MS: '500',
      HEARTBEAT_TIMEOUT_MS: '4000',
      RECONCILE_INTERVAL_MS: '1000',
      JOB_RETRY_BASE_MS: '200',
      WORKER_CONCURRENCY: '8',
      WEBHOOK_ALLOW_HTTP: '1',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1',
    };
    // The previous release's schema, by its own migrate command; the workspace by its admin CLI.
    const { workspaceId, apiKey } = setUpReleaseDatabase(dir, base, 'Upgrade drill');
    db = createDb({ connectionString: databaseUrl, max: 2, applicationName: 'drill' });
    log(`private Postgres on :${postgres.port}, private Redis on :${redis.port}, workspace ${workspaceId}`);

    const envOf = async (app: AppName) => ({
      ...base,
      ...(app === 'api' ? { PORT: String(await freePort()) } : {}),
      METRICS_PORT: String(await freePort()),
    });
    const readyUrl = (env: Record<string, string>, app: AppName) => `http://127.0.0.1:${app === 'api' ? env.PORT : env.METRICS_PORT}`;
    const startReady = async (root: string, app: AppName, which: 'old' | 'new') => {
      const env = await envOf(app);
      const started = Date.now();
      const proc = startApp(root, app, which, env);
      apps.push(proc);
      await untilReady(readyUrl(env, app), proc);
      return { proc, env, readyMs: Date.now() - started };
    };
    const backendOf = (env: Record<string, string>): Backend => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
      agents.push(agent);
      return { base: `http://127.0.0.1:${env.PORT}`, agent };
    };

    const [oldApi, oldWorker, oldScheduler] = await Promise.all([
      startReady(dir, 'api', 'old'),
      startReady(dir, 'worker', 'old'),
      startReady(dir, 'scheduler', 'old'),
    ]);
    const old = { api: oldApi, worker: oldWorker, scheduler: oldScheduler };
    log(
      `previous release serving: api ready in ${oldApi.readyMs} ms, worker ${oldWorker.readyMs} ms, scheduler ${oldScheduler.readyMs} ms`,
    );
    let api = backendOf(old.api.env);
    const auth = { 'X-API-Key': apiKey };
    const json = { 'Content-Type': 'application/json' };
    let phase: Phase = 'old';
    const samples: Sample[] = [];
    const call = async (method: 'GET' | 'POST', urlPath: string, headers: Record<string, string> = {}, body?: string) => {
      const sentAt = Date.now();
      const reply = await request(api, method, urlPath, { ...auth, ...headers }, body);
      samples.push({ phase, status: reply?.status ?? 0, retryAfter: Boolean(reply?.retryAfter), ms: Date.now() - sentAt });
      return reply;
    };

    const hook = await call(
      'POST',
      '/v1/webhooks',
      json,
      JSON.stringify({ url: receiver.url, events: ['*'], description: 'upgrade drill' }),
    );
    if (hook?.status !== 201) throw new Error(`could not create the webhook: ${hook?.status} ${hook?.body}`);

    // Once-schedules falling due every second from now until well past the last roll.
    const scheduleCount = options.schedules ?? Math.ceil((6 * options.phaseMs + 40_000) / 1000);
    const firstDue = Date.now() + 2000;
    for (let i = 0; i < scheduleCount; i += 1) {
      const body = JSON.stringify({
        name: `upgrade ${i}`,
        operation: 'profile',
        targets: [`upgrade_schedule_${i}`],
        frequency: 'once',
        timezone: 'UTC',
        starts_at: new Date(firstDue + i * 1000).toISOString(),
      });
      const made = await call('POST', '/v1/schedules', json, body);
      if (made?.status !== 201) throw new Error(`could not create a schedule: ${made?.status} ${made?.body}`);
    }

    let loading = true;
    let n = 0;
    const acceptedJobs = new Set<string>();
    const acceptedBatches = new Set<string>();
    let replays = 0;
    let abandoned = 0;
    /** Sends one submission until it is answered 200 or 202, resending with its key after a 503 or a lost answer. */
    const submit = async (urlPath: string, key: string, body: string): Promise<{ id: string } | null> => {
      const giveUpAt = Date.now() + 60_000;
      for (;;) {
        const reply = await call('POST', urlPath, { ...json, 'Idempotency-Key': key, 'Cache-Control': 'no-cache' }, body);
        if (reply && (reply.status === 202 || reply.status === 200)) {
          const made = JSON.parse(reply.body) as { id: string; idempotent_replay?: boolean };
          if (made.idempotent_replay) replays += 1;
          return made;
        }
        if ((reply && reply.status !== 503) || Date.now() > giveUpAt) {
          abandoned += 1;
          return null;
        }
        await sleep(reply?.retryAfter ? Number(reply.retryAfter) * 1000 : 250);
      }
    };
    const readBack = async (kind: 'jobs' | 'batches', ids: Set<string>) => {
      if (ids.size === 0) return;
      const list = [...ids];
      const reply = await call('GET', `/v1/${kind}/${list[Math.floor(Math.random() * list.length)]}`);
      if (reply?.status === 503) await sleep(Number(reply.retryAfter ?? 1) * 1000);
    };
    const jobClient = async (id: number) => {
      while (loading) {
        const i = n++;
        const made = await submit(
          '/v1/jobs',
          `upgrade-job-${id}-${i}`,
          JSON.stringify({ platform: 'instagram', operation: 'posts', target: `upgrade_${id}_${i}`, limit: 5 }),
        );
        if (made) acceptedJobs.add(made.id);
        await readBack('jobs', acceptedJobs);
      }
    };
    const batchClient = async (id: number) => {
      while (loading) {
        const i = n++;
        const targets = Array.from({ length: options.batchSize }, (_, t) => `upgrade_batch_${id}_${i}_${t}`);
        const made = await submit(
          '/v1/batches',
          `upgrade-batch-${id}-${i}`,
          JSON.stringify({ platform: 'instagram', operation: 'posts', targets, limit: 5 }),
        );
        if (made) acceptedBatches.add(made.id);
        await readBack('batches', acceptedBatches);
        await sleep(200);
      }
    };
    const prober = async () => {
      while (loading) {
        await call('GET', '/v1/account');
        await sleep(50);
      }
    };
    const load = [
      ...Array.from({ length: options.clients }, (_, i) => jobClient(i)),
      ...Array.from({ length: options.batchClients }, (_, i) => batchClient(i)),
      prober(),
    ];

    const steps: StepFigures[] = [];
    await sleep(options.phaseMs);

    // This checkout's migrations, while the previous release serves.
    phase = 'migrating';
    const migrationStarted = Date.now();
    const migrationsApplied = await migrateToLatest(db);
    steps.push({ step: `migrations (${migrationsApplied.length})`, ms: Date.now() - migrationStarted });
    log(`migrations applied under load in ${Date.now() - migrationStarted} ms: ${migrationsApplied.join(', ') || 'none'}`);
    phase = 'migrated';
    await sleep(options.phaseMs);

    if (options.roll !== false) await rollAll();
    loading = false;
    await Promise.all(load);
    /** Each process in turn to this checkout's code. */
    async function rollAll(): Promise<void> {
      // The API: the new one started and ready, traffic switched to it, then the old one drained.
      const newApi = await startReady(REPO_ROOT, 'api', 'new');
      const oldBackend = api;
      api = backendOf(newApi.env);
      await sleep(1000);
      const apiDrainStarted = Date.now();
      const apiExit = await old.api.proc.stop();
      oldBackend.agent.destroy();
      steps.push({ step: 'api rolled', ms: newApi.readyMs, drainMs: Date.now() - apiDrainStarted, exitCode: apiExit });
      log(`api rolled: new ready in ${newApi.readyMs} ms, old drained in ${Date.now() - apiDrainStarted} ms (exit ${apiExit})`);
      phase = 'api rolled';
      await sleep(options.phaseMs);

      for (const app of ['worker', 'scheduler'] as const) {
        const fresh = await startReady(REPO_ROOT, app, 'new');
        const drainStarted = Date.now();
        const exit = await old[app].proc.stop();
        steps.push({ step: `${app} rolled`, ms: fresh.readyMs, drainMs: Date.now() - drainStarted, exitCode: exit });
        log(`${app} rolled: new ready in ${fresh.readyMs} ms, old drained in ${Date.now() - drainStarted} ms (exit ${exit})`);
        phase = app === 'worker' ? 'worker rolled' : 'all new';
        await sleep(options.phaseMs);
      }
    }

    // Let the new fleet finish the work, dispatch every schedule and deliver every event.
    const lastDue = firstDue + scheduleCount * 1000;
    const settledBy = Math.max(Date.now(), lastDue) + 120_000;
    const undelivered = async () => {
      const events = await sql<{
        id: string;
      }>`select id from webhook_events where workspace_id = ${workspaceId} and type <> 'batch.child_ended'`.execute(db!);
      const got = new Set(receiver.messages.map((m) => m.headers['webhook-id']));
      return { events: events.rows.length, missing: events.rows.filter((e) => !got.has(e.id)).length };
    };
    for (;;) {
      const open = await sql<{
        n: string;
      }>`select count(*) as n from jobs where workspace_id = ${workspaceId} and status in ('queued', 'running')`.execute(db);
      const { missing } = await undelivered();
      if ((Number(open.rows[0].n) === 0 && Date.now() > lastDue + 3000 && missing === 0) || Date.now() > settledBy) break;
      await sleep(500);
    }

    // The upgrade's contract step, once every process runs the new release: the money's counters
    // recomputed from the reservations and the ledger (a release that did not keep one ran in
    // the window), by the new release's admin CLI as an operator runs it.
    const contractStarted = Date.now();
    const contract = reconcileCounters(base);
    steps.push({ step: `contract: counters reconciled (${contract.fixes.length} mended)`, ms: Date.now() - contractStarted });
    log(
      `contract step: ${contract.workspaces} balances checked, ${contract.fixes.length} counters mended${contract.fixes.length ? `: ${contract.fixes.map((f) => `${f.counter}${f.key_id ? ` ${f.key_id}` : ''} ${f.was} -> ${f.now}`).join(', ')}` : ''}`,
    );

    const audit = await checkLedger(db);
    const runs = await sql<{ schedule_id: string; dispatched: string }>`
      select s.id as schedule_id, count(r.job_id) filter (where r.job_id is not null) as dispatched
      from schedules s left join schedule_runs r on r.schedule_id = s.id
      where s.workspace_id = ${workspaceId} group by s.id`.execute(db);
    const jobs = await sql<{ id: string; status: string; batch_id: string | null; schedule_id: string | null }>`
      select id, status, batch_id, schedule_id from jobs where workspace_id = ${workspaceId}`.execute(db);
    const batchJobs = jobs.rows.filter((j) => j.batch_id && acceptedBatches.has(j.batch_id)).length;
    const byId = new Map(jobs.rows.map((j) => [j.id, j]));
    const lost =
      [...acceptedJobs].filter((id) => !byId.has(id)).length +
      [...acceptedBatches].filter((b) => !jobs.rows.some((j) => j.batch_id === b)).length;
    const untold = jobs.rows.filter(
      (j) => !acceptedJobs.has(j.id) && !(j.batch_id && acceptedBatches.has(j.batch_id)) && !j.schedule_id,
    ).length;
    const delivered = await undelivered();
    const ids = receiver.messages.map((m) => m.headers['webhook-id']);
    const deliveriesDelivered = await sql<{
      n: string;
    }>`select count(*) as n from webhook_deliveries where workspace_id = ${workspaceId} and status = 'succeeded'`.execute(db);

    for (const proc of apps) if (proc.release === 'new' || options.roll === false) await proc.stop();
    const byStatus: Record<string, number> = {};
    const byPhase: Record<string, Record<string, number>> = {};
    for (const s of samples) {
      byStatus[s.status] = (byStatus[s.status] ?? 0) + 1;
      const p = (byPhase[s.phase] ??= {});
      p[s.status] = (p[s.status] ?? 0) + 1;
    }
    const figures: UpgradeFigures = {
      release,
      installMs,
      migrationsApplied,
      steps,
      countersMended: contract.fixes,
      countersMendedByWorker: apps
        .filter((a) => a.release === 'new' && a.app === 'worker')
        .flatMap((a) => warnings(a.lines))
        .reduce((sum, r) => sum + (typeof r.mended === 'number' ? r.mended : 0), 0),
      requests: samples.length,
      byStatus,
      byPhase,
      latency: latencyByPhase(samples),
      connectionErrors: samples.filter((s) => s.status === 0).length,
      missingRetryAfter: samples.filter((s) => s.status === 503 && !s.retryAfter).length,
      submissions: { jobs: acceptedJobs.size, batches: acceptedBatches.size, batchJobs, replays, abandoned },
      jobs: {
        total: jobs.rows.length,
        completed: jobs.rows.filter((j) => j.status === 'completed').length,
        notCompleted: jobs.rows.filter((j) => j.status !== 'completed').length,
        lost,
        untold,
      },
      schedules: {
        due: scheduleCount,
        dispatchedOnce: runs.rows.filter((r) => Number(r.dispatched) === 1).length,
        dispatchedTwice: runs.rows.filter((r) => Number(r.dispatched) > 1).length,
      },
      webhooks: {
        events: delivered.events,
        received: new Set(ids).size,
        duplicates: ids.length - new Set(ids).size,
        missing: delivered.missing,
        deliveriesDelivered: Number(deliveriesDelivered.rows[0].n),
      },
      deaths: apps.filter((a) => a.died).map((a) => `${a.release} ${a.app} (${a.died!.signal ?? a.died!.code})`),
      unstructuredLogLines: apps.reduce((count, a) => count + unstructuredLines(a.lines).length, 0),
      audit,
      failures: [],
    };
    figures.failures = judge(figures, apps);
    return figures;
  } finally {
    for (const agent of agents) agent.destroy();
    for (const proc of apps) await proc.stop('SIGKILL').catch(() => undefined);
    await db?.destroy().catch(() => undefined);
    await receiver.close().catch(() => undefined);
    await redis.destroy().catch(() => undefined);
    await postgres.destroy().catch(() => undefined);
    if (unpacked) rmSync(unpacked, { recursive: true, force: true });
  }
}

function latencyByPhase(samples: Sample[]): Record<string, { p99: number; max: number }> {
  const out: Record<string, { p99: number; max: number }> = {};
  for (const phase of new Set(samples.map((s) => s.phase))) {
    const times = samples
      .filter((s) => s.phase === phase)
      .map((s) => s.ms)
      .sort((a, b) => a - b);
    out[phase] = { p99: times[Math.min(times.length - 1, Math.floor(times.length * 0.99))], max: times[times.length - 1] };
  }
  return out;
}

function judge(f: UpgradeFigures, apps: AppProcess[]): string[] {
  const failures: string[] = [];
  if (f.deaths.length > 0) failures.push(`processes died: ${f.deaths.join(', ')}`);
  for (const step of f.steps)
    if (step.exitCode !== undefined && step.exitCode !== 0) failures.push(`${step.step}: the old process exited ${step.exitCode}, not 0`);
  const bad = Object.entries(f.byStatus).filter(([status]) => !['200', '201', '202', '503'].includes(status));
  if (bad.length > 0) failures.push(`requests failed: ${JSON.stringify(Object.fromEntries(bad))}`);
  if (f.missingRetryAfter > 0) failures.push(`${f.missingRetryAfter} 503s without Retry-After`);
  if (f.submissions.abandoned > 0) failures.push(`${f.submissions.abandoned} submissions never accepted`);
  if (f.jobs.lost > 0) failures.push(`${f.jobs.lost} accepted jobs or batches missing`);
  if (f.jobs.untold > 0) failures.push(`${f.jobs.untold} jobs no client was told of`);
  if (f.jobs.notCompleted > 0) failures.push(`${f.jobs.notCompleted} jobs did not complete`);
  if (f.audit.problems.length > 0) failures.push(`ledger audit: ${f.audit.problems.slice(0, 10).join('; ')}`);
  if (f.schedules.dispatchedOnce !== f.schedules.due)
    failures.push(
      `${f.schedules.due - f.schedules.dispatchedOnce} of ${f.schedules.due} schedules not dispatched exactly once (${f.schedules.dispatchedTwice} twice or more)`,
    );
  if (f.webhooks.missing > 0) failures.push(`${f.webhooks.missing} of ${f.webhooks.events} webhook events never reached the receiver`);
  if (f.byStatus['500']) {
    const errors = apps.flatMap((a) =>
      warnings(a.lines)
        .filter((r) => Number(r.level) >= 50)
        .slice(0, 5)
        .map((r) => `${a.release} ${a.app}: ${JSON.stringify(r).slice(0, 600)}`),
    );
    failures.push(`errors logged: ${errors.join(' | ')}`);
  }
  if (f.unstructuredLogLines > 0) {
    const sample = apps.flatMap((a) =>
      unstructuredLines(a.lines)
        .slice(0, 3)
        .map((l) => `${a.release} ${a.app}: ${l}`),
    );
    failures.push(`${f.unstructuredLogLines} log lines are not JSON, e.g. ${sample.join(' | ')}`);
  }
  return failures;
}

export function summarizeUpgrade(f: UpgradeFigures): string {
  return [
    `from ${f.release.rev} (${f.release.sha.slice(0, 12) || 'no git'}, ${f.release.how}) to this checkout; install ${f.installMs} ms`,
    `migrations the window saw (applied under load): ${f.migrationsApplied.length} (${f.migrationsApplied.join(', ') || 'none'})`,
    `counters mended by the new worker's reconciler in the window: ${f.countersMendedByWorker}`,
    `contract step: ${f.countersMended.length} counters mended${f.countersMended.length ? ` (${f.countersMended.map((c) => `${c.counter}${c.key_id ? ` of ${c.key_id}` : ''} ${c.was} -> ${c.now}`).join(', ')})` : ''}; the audit below is after it`,
    ...f.steps.map(
      (s) => `  ${s.step}: ${s.ms} ms${s.drainMs !== undefined ? `; old drained in ${s.drainMs} ms, exit ${s.exitCode}` : ''}`,
    ),
    `requests: ${f.requests} ${JSON.stringify(f.byStatus)}; 503 without Retry-After: ${f.missingRetryAfter}; lost connections: ${f.connectionErrors}`,
    `by phase: ${Object.entries(f.byPhase)
      .map(([p, s]) => `${p} ${JSON.stringify(s)} p99 ${f.latency[p]?.p99} ms, max ${f.latency[p]?.max} ms`)
      .join('; ')}`,
    `submissions: ${f.submissions.jobs} jobs, ${f.submissions.batches} batches (${f.submissions.batchJobs} children); replays ${f.submissions.replays}, abandoned ${f.submissions.abandoned}`,
    `jobs: ${f.jobs.total} (${f.jobs.completed} completed, ${f.jobs.notCompleted} not); lost ${f.jobs.lost}; no client told of ${f.jobs.untold}`,
    `schedules: ${f.schedules.due} due, ${f.schedules.dispatchedOnce} dispatched exactly once, ${f.schedules.dispatchedTwice} twice or more`,
    `webhooks: ${f.webhooks.events} events, ${f.webhooks.received} received (${f.webhooks.duplicates} duplicates), ${f.webhooks.missing} missing; ${f.webhooks.deliveriesDelivered} deliveries recorded delivered`,
    `ledger: ${f.audit.jobs + f.audit.cached} jobs: ${f.audit.completed} completed (${f.audit.billed} credits billed), ${f.audit.failed} failed, ${f.audit.cancelled} cancelled, ${f.audit.active} active; ${f.audit.problems.length} problems`,
    `process deaths: ${f.deaths.length}; non-JSON log lines: ${f.unstructuredLogLines}`,
  ].join('\n');
}

if (require.main === module) {
  const install = process.env.DRILL_INSTALL === 'link' ? 'link' : 'ci';
  const main = async () => {
    // PREVIOUS_RELEASE=all: the last three releases of CHANGELOG.md, each in turn (newest first).
    const releases = process.env.PREVIOUS_RELEASE?.trim() === 'all' ? resolvePreviousReleases() : [undefined];
    const results: Array<{ rev: string; failures: string[] }> = [];
    for (const release of releases) {
      const figures = await runUpgradeDrill({
        ...DEFAULT_OPTIONS,
        install,
        ...(release ? { release } : {}),
        phaseMs: Number(process.env.DRILL_PHASE_MS ?? DEFAULT_OPTIONS.phaseMs),
        clients: Number(process.env.DRILL_CLIENTS ?? DEFAULT_OPTIONS.clients),
      });
      process.stdout.write(`${summarizeUpgrade(figures)}\n`);
      process.stdout.write(figures.failures.length > 0 ? `FAILED:\n- ${figures.failures.join('\n- ')}\n` : 'PASSED\n');
      results.push({ rev: figures.release.rev, failures: figures.failures });
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
