/**
 * Drill: Postgres restarted under load.
 *
 * Starts a private Postgres cluster and a private Redis (free ports, temporary directories),
 * runs the api, worker and scheduler processes against them, and puts them under load: clients
 * submitting jobs (each with its own Idempotency-Key, resent as is after a 503 or a lost
 * connection, as openapi.yaml tells clients to) and reading them back, while a prober asks
 * GET /v1/account every 50 ms. Then, `rounds` times, Postgres is stopped (alternately `fast`,
 * which ends every session with 57P01, and `immediate`, a crash) and started again.
 *
 * It passes when: no service process died; no request met a 500, another unexpected status or
 * a lost connection; requests during each fault got 503 with Retry-After; the prober answered
 * 200 again within 5 s of Postgres being back, every round; every accepted job exists and is
 * terminal, and no job exists that no client was told of; once-schedules falling due every
 * second across the drill are each dispatched exactly once; the ledger audit is clean; each
 * process wrote only JSON log lines, with one outage warning when Postgres went and one when
 * it came back.
 *
 *   npm run drill:postgres                      # 10 rounds
 *   DRILL_ROUNDS=3 npm run drill:postgres
 */
import http from 'node:http';
import { createDb, migrateToLatest } from '@sdx/db';
import { createApiKey, createWorkspace, systemClock } from '@sdx/domain/testing';
import { keepAliveAgent, send } from '../lib/http';
import { checkLedger, freePort, type LedgerReport, startPrivatePostgres, startPrivateRedis, TEST_SECRETS_KEY } from '@sdx/testing';
import { type AppProcess, startApp, unstructuredLines, warnings } from './lib/processes';

export interface PostgresRestartOptions {
  rounds: number;
  /** Concurrent submitting clients. */
  clients: number;
  /** Load before the first fault and between faults. */
  gapMs: number;
  /** How long Postgres stays down each round. */
  downMs: number;
  /** Recovery target: the prober answers 200 again within this long after Postgres is back. */
  recoveryTargetMs: number;
  log?: (line: string) => void;
}

export const DEFAULT_OPTIONS: PostgresRestartOptions = { rounds: 10, clients: 12, gapMs: 3000, downMs: 1500, recoveryTargetMs: 5000 };

export interface RoundFigures {
  round: number;
  mode: 'fast' | 'immediate';
  /** Postgres stopped → accepting connections again. */
  outageMs: number;
  /** Responses during the fault window, by status. */
  statuses: Record<string, number>;
  /** Postgres back → the prober's first 200 after its last failure. */
  recoveryMs: number;
}

export interface PostgresRestartFigures {
  options: PostgresRestartOptions;
  rounds: RoundFigures[];
  requests: number;
  byStatus: Record<string, number>;
  /** Requests whose connection failed or that got no HTTP answer. */
  connectionErrors: number;
  /** 503 responses without Retry-After. */
  missingRetryAfter: number;
  submissions: { accepted: number; replays: number; abandoned: number };
  /** Once-schedules due during the drill, and how many were dispatched exactly once. */
  schedules: { due: number; dispatchedOnce: number };
  /** Accepted jobs missing from the database. */
  lostJobs: number;
  /** Jobs in the database that no client was answered for. */
  untoldJobs: number;
  deaths: string[];
  unstructuredLogLines: number;
  outageWarnings: Record<string, { started: number; ended: number }>;
  audit: LedgerReport;
  failures: string[];
}

interface Sample {
  sentAt: number;
  at: number;
  status: number;
  retryAfter: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function runPostgresRestartDrill(options: PostgresRestartOptions = DEFAULT_OPTIONS): Promise<PostgresRestartFigures> {
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const postgres = await startPrivatePostgres();
  const redis = await startPrivateRedis();
  const apps: AppProcess[] = [];
  let audit: LedgerReport | null = null;
  const agent: http.Agent = keepAliveAgent(64);
  try {
    const databaseUrl = await postgres.createDatabase('social_data');
    const db = createDb({ connectionString: databaseUrl, max: 2, applicationName: 'drill' });
    await migrateToLatest(db);
    const { workspaceId, apiKey } = await db.transaction().execute(async (tx) => {
      const workspace = await createWorkspace(tx, systemClock, {
        name: 'Drill',
        credits: 100_000_000,
        rateLimitPerMinute: 1_000_000,
        maxActiveJobs: 1_000_000,
        maxResultLimit: 25_000,
      });
      const key = await createApiKey(tx, workspace.id, 'drill');
      return { workspaceId: workspace.id, apiKey: key.api_key };
    });
    log(`private Postgres on :${postgres.port}, private Redis on :${redis.port}, workspace ${workspaceId}`);

    const port = await freePort();
    const env = {
      NODE_ENV: 'production',
      SECRETS_KEY: TEST_SECRETS_KEY,
      // Production runs the sandbox only when told to (docs/providers.md).
      PROVIDER_MODE: 'sandbox',
      DATABASE_URL: databaseUrl,
      REDIS_URL: redis.url,
      REDIS_PREFIX: 'drill',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      SANDBOX_LATENCY_MS: '20',
      HEARTBEAT_INTERVAL_MS: '500',
      HEARTBEAT_TIMEOUT_MS: '4000',
      RECONCILE_INTERVAL_MS: '1000',
      JOB_RETRY_BASE_MS: '200',
      WORKER_CONCURRENCY: '8',
      SYNC_TIMEOUT_MS: '5000',
    };
    for (const app of ['api', 'worker', 'scheduler'] as const) apps.push(startApp(app, env));
    const base = `http://127.0.0.1:${port}`;
    const auth = { 'X-API-Key': apiKey };
    const call = (method: 'GET' | 'POST', path: string, headers: Record<string, string> = {}, body?: string) =>
      send(agent, base, { method, path, headers: { ...auth, ...headers }, body }).then(
        (reply) => reply,
        () => null,
      );

    // Up: /readyz answers 200.
    const upBy = Date.now() + 30_000;
    while ((await call('GET', '/readyz'))?.status !== 200) {
      if (Date.now() > upBy) throw new Error(`the service did not become ready: ${apps.flatMap((a) => a.lines.slice(-5)).join('\n')}`);
      await sleep(100);
    }

    // Schedules falling due one a second across the whole drill, faults included: each must be
    // dispatched exactly once, so the scheduler waited the faults out and resumed.
    const scheduleCount = options.rounds * 4 + 2;
    const firstDue = Date.now() + 2000;
    for (let i = 0; i < scheduleCount; i += 1) {
      const body = JSON.stringify({
        name: `drill ${i}`,
        operation: 'profile',
        targets: [`drill_schedule_${i}`],
        frequency: 'once',
        timezone: 'UTC',
        starts_at: new Date(firstDue + i * 1000).toISOString(),
      });
      const created = await call('POST', '/v1/schedules', { 'Content-Type': 'application/json' }, body);
      if (created?.status !== 201) throw new Error(`could not create a schedule: ${created?.status} ${created?.body}`);
    }

    const samples: Sample[] = [];
    const probes: Array<{ sentAt: number; at: number; ok: boolean }> = [];
    let connectionErrors = 0;
    const record = (sentAt: number, reply: { status: number } | null, retryAfter: boolean) => {
      if (!reply) connectionErrors += 1;
      samples.push({ sentAt, at: Date.now(), status: reply?.status ?? 0, retryAfter });
    };

    // The load: each client submits job after job, resending one submission until it is answered.
    let loading = true;
    let submitted = 0;
    const accepted = new Map<string, string>();
    let replays = 0;
    let abandoned = 0;
    const client = async (id: number) => {
      while (loading) {
        const n = submitted++;
        const key = `drill-${id}-${n}`;
        const body = JSON.stringify({ platform: 'instagram', operation: 'posts', target: `drill_${id}_${n}`, limit: 5 });
        const giveUpAt = Date.now() + 60_000;
        for (;;) {
          const sentAt = Date.now();
          const reply = await sendRaw(
            agent,
            base,
            'POST',
            '/v1/jobs',
            { ...auth, 'Idempotency-Key': key, 'Cache-Control': 'no-cache' },
            body,
          );
          record(sentAt, reply, Boolean(reply?.retryAfter));
          if (reply && (reply.status === 202 || reply.status === 200)) {
            const job = JSON.parse(reply.body) as { id: string; idempotent_replay?: boolean };
            if (job.idempotent_replay) replays += 1;
            accepted.set(key, job.id);
            break;
          }
          const temporary = !reply || reply.status === 503;
          if (!temporary || Date.now() > giveUpAt) {
            abandoned += 1;
            break;
          }
          await sleep(reply?.retryAfter ? Number(reply.retryAfter) * 1000 : 250);
        }
        const known = [...accepted.values()];
        if (known.length > 0) {
          const sentAt = Date.now();
          const read = await sendRaw(agent, base, 'GET', `/v1/jobs/${known[Math.floor(Math.random() * known.length)]}`, auth);
          record(sentAt, read, Boolean(read?.retryAfter));
          if (read?.status === 503) await sleep(Number(read.retryAfter ?? 1) * 1000);
        }
      }
    };
    const prober = async () => {
      while (loading) {
        const sentAt = Date.now();
        const reply = await sendRaw(agent, base, 'GET', '/v1/account', auth);
        record(sentAt, reply, Boolean(reply?.retryAfter));
        probes.push({ sentAt, at: Date.now(), ok: reply?.status === 200 });
        await sleep(50);
      }
    };
    const load = [...Array.from({ length: options.clients }, (_, i) => client(i)), prober()];

    const rounds: RoundFigures[] = [];
    await sleep(options.gapMs);
    for (let round = 1; round <= options.rounds; round += 1) {
      const mode = round % 2 === 1 ? 'fast' : 'immediate';
      const stoppedAt = Date.now();
      await postgres.stop(mode);
      await sleep(options.downMs);
      await postgres.start();
      const backAt = Date.now();
      // Wait for the prober to see the service answer again (or the target to pass), then load on.
      const deadline = backAt + Math.max(options.recoveryTargetMs * 2, options.gapMs);
      while (Date.now() < deadline && !probes.some((p) => p.sentAt >= backAt && p.ok)) await sleep(20);
      await sleep(options.gapMs);
      const lastFailure = Math.max(backAt, ...probes.filter((p) => p.sentAt >= stoppedAt && !p.ok).map((p) => p.at));
      const firstOk = probes.find((p) => p.sentAt >= lastFailure && p.ok);
      const recoveryMs = firstOk ? firstOk.at - backAt : Number.POSITIVE_INFINITY;
      const statuses: Record<string, number> = {};
      const windowEnd = firstOk?.at ?? Date.now();
      for (const s of samples) if (s.at >= stoppedAt && s.sentAt <= windowEnd) statuses[s.status] = (statuses[s.status] ?? 0) + 1;
      const figures: RoundFigures = { round, mode, outageMs: backAt - stoppedAt, statuses, recoveryMs };
      rounds.push(figures);
      log(
        `round ${round} (${mode}): Postgres down ${figures.outageMs} ms; answers during the fault ${JSON.stringify(statuses)}; service answered again ${recoveryMs} ms after Postgres was back`,
      );
    }
    loading = false;
    await Promise.all(load);

    // Let the fleet finish every accepted job, then audit.
    const settledBy = Date.now() + 120_000;
    for (;;) {
      const open = await db
        .selectFrom('jobs')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('workspace_id', '=', workspaceId)
        .where('status', 'in', ['queued', 'running'])
        .executeTakeFirstOrThrow();
      const lastDuePassed = Date.now() > firstDue + scheduleCount * 1000 + 3000;
      if ((Number(open.n) === 0 && lastDuePassed) || Date.now() > settledBy) break;
      await sleep(250);
    }
    audit = await checkLedger(db);
    const runs = await db
      .selectFrom('schedules')
      .leftJoin('schedule_runs', 'schedule_runs.schedule_id', 'schedules.id')
      .select(['schedules.id as scheduleId', 'schedule_runs.job_id as jobId', 'schedule_runs.status as status'])
      .where('schedules.workspace_id', '=', workspaceId)
      .execute();
    const runsPerSchedule = new Map<string, number>();
    for (const r of runs)
      runsPerSchedule.set(r.scheduleId, (runsPerSchedule.get(r.scheduleId) ?? 0) + (r.jobId && r.status === 'queued' ? 1 : 0));
    const scheduledJobs = new Set(runs.map((r) => r.jobId).filter((id): id is string => Boolean(id)));
    const schedules = { due: scheduleCount, dispatchedOnce: [...runsPerSchedule.values()].filter((n) => n === 1).length };
    const ids = new Set(
      (await db.selectFrom('jobs').select('id').where('workspace_id', '=', workspaceId).execute())
        .map((r) => r.id)
        .filter((id) => !scheduledJobs.has(id)),
    );
    const told = new Set(accepted.values());
    const lostJobs = [...told].filter((id) => !ids.has(id)).length;
    const untoldJobs = [...ids].filter((id) => !told.has(id)).length;
    await db.destroy();

    for (const app of apps) await app.stop();
    const byStatus: Record<string, number> = {};
    for (const s of samples) byStatus[s.status] = (byStatus[s.status] ?? 0) + 1;
    const outageWarnings: Record<string, { started: number; ended: number }> = {};
    for (const app of apps) {
      const mine = warnings(app.lines).filter((w) => w.dependency === 'postgres');
      outageWarnings[app.app] = {
        started: mine.filter((w) => w.outage === 'started').length,
        ended: mine.filter((w) => w.outage === 'ended').length,
      };
    }
    const figures: PostgresRestartFigures = {
      options,
      rounds,
      requests: samples.length,
      byStatus,
      connectionErrors,
      missingRetryAfter: samples.filter((s) => s.status === 503 && !s.retryAfter).length,
      submissions: { accepted: accepted.size, replays, abandoned },
      schedules,
      lostJobs,
      untoldJobs,
      deaths: apps.filter((a) => a.died).map((a) => `${a.app} (${a.died!.signal ?? a.died!.code})`),
      unstructuredLogLines: apps.reduce((n, a) => n + unstructuredLines(a.lines).length, 0),
      outageWarnings,
      audit,
      failures: [],
    };
    figures.failures = judge(figures, apps);
    return figures;
  } finally {
    agent.destroy();
    for (const app of apps) await app.stop('SIGKILL').catch(() => undefined);
    await redis.destroy();
    await postgres.destroy();
  }
}

function judge(f: PostgresRestartFigures, apps: AppProcess[]): string[] {
  const failures: string[] = [];
  if (f.deaths.length > 0) failures.push(`processes died: ${f.deaths.join(', ')}`);
  const bad = Object.entries(f.byStatus).filter(([status]) => !['200', '202', '503'].includes(status));
  if (bad.length > 0) failures.push(`unexpected statuses: ${JSON.stringify(Object.fromEntries(bad))}`);
  if (f.connectionErrors > 0) failures.push(`${f.connectionErrors} requests lost their connection`);
  if (f.missingRetryAfter > 0) failures.push(`${f.missingRetryAfter} 503s without Retry-After`);
  for (const r of f.rounds) {
    if (!((r.statuses['503'] ?? 0) > 0)) failures.push(`round ${r.round}: no 503 during the fault`);
    if (!(r.recoveryMs <= f.options.recoveryTargetMs))
      failures.push(`round ${r.round}: recovery ${r.recoveryMs} ms > ${f.options.recoveryTargetMs} ms`);
  }
  if (f.submissions.abandoned > 0) failures.push(`${f.submissions.abandoned} submissions never accepted`);
  if (f.schedules.dispatchedOnce !== f.schedules.due)
    failures.push(`${f.schedules.due - f.schedules.dispatchedOnce} of ${f.schedules.due} due schedules not dispatched exactly once`);
  if (f.lostJobs > 0) failures.push(`${f.lostJobs} accepted jobs missing`);
  if (f.untoldJobs > 0) failures.push(`${f.untoldJobs} jobs no client was told of`);
  if (f.audit.problems.length > 0) failures.push(`ledger audit: ${f.audit.problems.slice(0, 10).join('; ')}`);
  if (f.unstructuredLogLines > 0) {
    const sample = apps.flatMap((a) =>
      unstructuredLines(a.lines)
        .slice(0, 3)
        .map((l) => `${a.app}: ${l}`),
    );
    failures.push(`${f.unstructuredLogLines} log lines are not JSON, e.g. ${sample.join(' | ')}`);
  }
  for (const [app, w] of Object.entries(f.outageWarnings)) {
    if (w.started > f.rounds.length || w.ended !== w.started)
      failures.push(`${app}: ${w.started} outage-start and ${w.ended} outage-end warnings for ${f.rounds.length} faults`);
  }
  return failures;
}

/** One request; resolves null when the connection failed. Keeps Retry-After. */
function sendRaw(
  agent: http.Agent,
  base: string,
  method: 'GET' | 'POST',
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: string; retryAfter: string | null } | null> {
  return new Promise((resolve) => {
    const url = new URL(path, base);
    const all: Record<string, string | number> = { ...headers };
    if (body !== undefined) {
      all['content-type'] = 'application/json';
      all['content-length'] = Buffer.byteLength(body);
    }
    const req = http.request(
      { agent, host: url.hostname, port: url.port, path: url.pathname + url.search, method, headers: all },
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

function summary(f: PostgresRestartFigures): string {
  const recoveries = f.rounds.map((r) => r.recoveryMs);
  const served503 = f.rounds.reduce((n, r) => n + (r.statuses['503'] ?? 0), 0);
  return [
    `rounds: ${f.rounds.length}; requests: ${f.requests} ${JSON.stringify(f.byStatus)}; connection errors: ${f.connectionErrors}`,
    `503 during faults: ${served503} (all with Retry-After: ${f.missingRetryAfter === 0}); recovery after Postgres was back: max ${Math.max(...recoveries)} ms, mean ${Math.round(recoveries.reduce((a, b) => a + b, 0) / recoveries.length)} ms`,
    `schedules due during the drill: ${f.schedules.due}, dispatched exactly once: ${f.schedules.dispatchedOnce}`,
    `process deaths: ${f.deaths.length}; submissions accepted ${f.submissions.accepted} (replayed after a lost answer: ${f.submissions.replays}), abandoned ${f.submissions.abandoned}; lost jobs ${f.lostJobs}; jobs no client was told of ${f.untoldJobs}`,
    `ledger: ${f.audit.jobs + f.audit.cached} jobs: ${f.audit.completed} completed (${f.audit.billed} credits billed), ${f.audit.failed} failed, ${f.audit.cancelled} cancelled, ${f.audit.active} active, ${f.audit.cached} cached; ${f.audit.problems.length} problems`,
    `logs: ${f.unstructuredLogLines} non-JSON lines; outage warnings ${JSON.stringify(f.outageWarnings)}`,
  ].join('\n');
}

if (require.main === module) {
  const rounds = Number(process.env.DRILL_ROUNDS ?? DEFAULT_OPTIONS.rounds);
  runPostgresRestartDrill({ ...DEFAULT_OPTIONS, rounds })
    .then((figures) => {
      process.stdout.write(`${summary(figures)}\n`);
      if (figures.failures.length > 0) {
        process.stdout.write(`FAILED:\n- ${figures.failures.join('\n- ')}\n`);
        process.exit(1);
      }
      process.stdout.write('PASSED\n');
      process.exit(0);
    })
    .catch((error) => {
      console.error(error);
      process.exit(1);
    });
}

export { summary as summarizePostgresRestart };
