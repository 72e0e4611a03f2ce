/**
 * Drill: a Redis Cluster master killed under load.
 *
 * A private Postgres and a private six-node Redis Cluster (three masters, three replicas, node
 * timeout 1 s); the api process and `workers` worker processes run on the cluster
 * (REDIS_CLUSTER_NODES), as in production. Clients submit jobs continuously (each with its own
 * Idempotency-Key, resent after a 503 or a lost connection, as openapi.yaml tells clients to).
 * After `beforeMs`, the master holding the queues' slot (the hash tag of the prefix) is killed
 * with SIGKILL; its replica takes over; the load goes on `afterMs` past the failover.
 *
 * It passes when: no service process died; no request met a status other than 200, 202 or 503
 * (with Retry-After); every submission was accepted in the end; every accepted job exists and
 * completed, and no job exists that no client was told of (no job lost, none made twice); the
 * ledger audit is exact (each job reserved once, billed once); the cluster failed over.
 * Figures: answers by phase, the failover's time, the time from the kill to the first 202 after
 * it and to every job completed.
 *
 *   npm run drill:redis-failover          (DRILL_RATE=20, DRILL_BEFORE_S=8, DRILL_AFTER_S=10, DRILL_WORKERS=2)
 */
import http from 'node:http';
import { sql } from 'kysely';
import { createDb, migrateToLatest } from '@sdx/db';
import { createApiKey, createWorkspace, systemClock } from '@sdx/domain/testing';
import { keepAliveAgent } from '../lib/http';
import {
  checkLedger,
  freePort,
  type LedgerReport,
  type PrivatePostgres,
  type PrivateRedisCluster,
  startPrivatePostgres,
  startRedisCluster,
  TEST_SECRETS_KEY,
} from '@sdx/testing';
import { type AppProcess, startApp, unstructuredLines } from './lib/processes';

export interface RedisFailoverOptions {
  /** Job submissions started per second. */
  rate: number;
  /** Load before the kill. */
  beforeMs: number;
  /** Load after the failover. */
  afterMs: number;
  /** Worker processes. */
  workers: number;
  log?: (line: string) => void;
}

export const DEFAULT_OPTIONS: RedisFailoverOptions = {
  rate: Number(process.env.DRILL_RATE ?? 20),
  beforeMs: Number(process.env.DRILL_BEFORE_S ?? 8) * 1000,
  afterMs: Number(process.env.DRILL_AFTER_S ?? 10) * 1000,
  workers: Number(process.env.DRILL_WORKERS ?? 2),
};

type Phase = 'before' | 'failover' | 'after';

export interface RedisFailoverFigures {
  options: Omit<RedisFailoverOptions, 'log'>;
  /** Answers to POST /v1/jobs by phase and status (`error`: the connection failed). */
  answers: Record<Phase, Record<string, number>>;
  /** Kill → the replica is master and every node says cluster_state:ok. */
  failoverMs: number;
  /** Kill → the first 202 to a submission sent after the kill. */
  killToFirstAcceptedMs: number | null;
  /** Kill → every accepted job completed. */
  killToDrainedMs: number;
  submissions: { sent: number; accepted: number; retried: number; abandoned: number };
  lostJobs: number;
  untoldJobs: number;
  jobsByStatus: Record<string, number>;
  deaths: string[];
  missingRetryAfter: number;
  unstructuredLogLines: number;
  killed: { port: number; replicaPort: number };
  audit: LedgerReport;
  failures: string[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function runRedisFailoverDrill(options: RedisFailoverOptions = DEFAULT_OPTIONS): Promise<RedisFailoverFigures> {
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  let postgres: PrivatePostgres | null = null;
  let cluster: PrivateRedisCluster | null = null;
  const apps: AppProcess[] = [];
  const agent = keepAliveAgent(64);
  try {
    [postgres, cluster] = await Promise.all([startPrivatePostgres(), startRedisCluster()]);
    const databaseUrl = await postgres.createDatabase('sdx_drill_redis_failover');
    const db = createDb({ connectionString: databaseUrl, max: 4, applicationName: 'drill' });
    await migrateToLatest(db);
    const { workspaceId, apiKey } = await db.transaction().execute(async (tx) => {
      const workspace = await createWorkspace(tx, systemClock, {
        name: 'Drill',
        credits: 100_000_000,
        rateLimitPerMinute: 1_000_000,
        maxActiveJobs: 1_000_000,
      });
      const key = await createApiKey(tx, workspace.id, 'drill');
      return { workspaceId: workspace.id, apiKey: key.api_key };
    });
    const prefix = 'drill';
    log(`private Postgres on :${postgres.port}, Redis Cluster on ${cluster.nodesEnv} (masters ${(await cluster.masters()).join(', ')})`);

    const port = await freePort();
    const env = {
      NODE_ENV: 'production',
      SECRETS_KEY: TEST_SECRETS_KEY,
      PROVIDER_MODE: 'sandbox',
      DATABASE_URL: databaseUrl,
      REDIS_URL: `redis://127.0.0.1:${cluster.nodes[0].port}/0`,
      REDIS_CLUSTER_NODES: cluster.nodesEnv,
      REDIS_PREFIX: prefix,
      PORT: String(port),
      LOG_LEVEL: 'warn',
      SANDBOX_LATENCY_MS: '20',
      HEARTBEAT_INTERVAL_MS: '500',
      HEARTBEAT_TIMEOUT_MS: '4000',
      RECONCILE_INTERVAL_MS: '1000',
      JOB_RETRY_BASE_MS: '200',
      WORKER_CONCURRENCY: '8',
    };
    apps.push(startApp('api', env));
    for (let i = 0; i < options.workers; i++) apps.push(startApp('worker', env));
    const base = `http://127.0.0.1:${port}`;
    const auth = { 'X-API-Key': apiKey };
    const upBy = Date.now() + 60_000;
    while ((await request(agent, base, 'GET', '/readyz', {}))?.status !== 200) {
      if (Date.now() > upBy) throw new Error(`the service did not become ready: ${apps.flatMap((a) => a.lines.slice(-5)).join('\n')}`);
      await sleep(100);
    }

    const answers: Record<Phase, Record<string, number>> = { before: {}, failover: {}, after: {} };
    let phase: Phase = 'before';
    let killAt = 0;
    let firstAcceptedAfterKill = 0;
    let missingRetryAfter = 0;
    let retried = 0;
    let abandoned = 0;
    let sent = 0;
    const accepted = new Map<string, string>();
    const submit = async (n: number) => {
      const key = `failover-${n}`;
      const body = JSON.stringify({ platform: 'instagram', operation: 'profile', target: `failover_${n}` });
      const giveUpAt = Date.now() + 60_000;
      for (let attempt = 0; ; attempt++) {
        if (attempt > 0) retried += 1;
        const at = phase;
        const sentAt = Date.now();
        const reply = await request(
          agent,
          base,
          'POST',
          '/v1/jobs',
          { ...auth, 'Idempotency-Key': key, 'Cache-Control': 'no-cache' },
          body,
        );
        const status = reply ? String(reply.status) : 'error';
        answers[at][status] = (answers[at][status] ?? 0) + 1;
        if (reply?.status === 503 && !reply.retryAfter) missingRetryAfter += 1;
        if (reply && (reply.status === 202 || reply.status === 200)) {
          accepted.set(key, (JSON.parse(reply.body) as { id: string }).id);
          if (killAt > 0 && sentAt >= killAt && firstAcceptedAfterKill === 0) firstAcceptedAfterKill = Date.now();
          return;
        }
        if ((reply && reply.status !== 503) || Date.now() > giveUpAt) {
          abandoned += 1;
          return;
        }
        await sleep(reply?.retryAfter ? Math.min(1000, Number(reply.retryAfter) * 1000) : 250);
      }
    };
    let loading = true;
    const inFlight = new Set<Promise<void>>();
    const load = (async () => {
      const started = Date.now();
      for (let i = 0; loading; i++) {
        const due = started + (i * 1000) / options.rate;
        if (due > Date.now()) await sleep(due - Date.now());
        const p = submit(sent++);
        inFlight.add(p);
        void p.finally(() => inFlight.delete(p));
      }
      await Promise.all([...inFlight]);
    })();

    await sleep(options.beforeMs);
    phase = 'failover';
    // The master of the queues' slot: every queue entry lives there.
    const killed = await cluster.killMaster(`{${prefix}}`);
    killAt = Date.now();
    log(`killed master :${killed.port} (its replica :${killed.replicaPort} takes over)`);
    await killed.failedOver(30_000);
    const failoverMs = Date.now() - killAt;
    log(`failed over in ${failoverMs} ms`);
    phase = 'after';
    await sleep(options.afterMs);
    loading = false;
    await load;

    const drainedBy = Date.now() + 120_000;
    for (;;) {
      const { rows } = await sql<{
        n: number;
      }>`select count(*)::int as n from jobs where workspace_id = ${workspaceId} and status in ('queued', 'running')`.execute(db);
      if (rows[0].n === 0 || Date.now() > drainedBy) break;
      await sleep(200);
    }
    const killToDrainedMs = Date.now() - killAt;
    const audit = await checkLedger(db);
    const ids = new Set((await db.selectFrom('jobs').select('id').where('workspace_id', '=', workspaceId).execute()).map((r) => r.id));
    const told = new Set(accepted.values());
    const statuses = await sql<{ status: string; n: number }>`select status, count(*)::int as n from jobs group by status`.execute(db);
    await db.destroy();
    for (const app of apps) await app.stop();

    const figures: RedisFailoverFigures = {
      options: { rate: options.rate, beforeMs: options.beforeMs, afterMs: options.afterMs, workers: options.workers },
      answers,
      failoverMs,
      killToFirstAcceptedMs: firstAcceptedAfterKill ? firstAcceptedAfterKill - killAt : null,
      killToDrainedMs,
      submissions: { sent, accepted: accepted.size, retried, abandoned },
      lostJobs: [...told].filter((id) => !ids.has(id)).length,
      untoldJobs: [...ids].filter((id) => !told.has(id)).length,
      jobsByStatus: Object.fromEntries(statuses.rows.map((r) => [r.status, r.n])),
      deaths: apps.filter((a) => a.died).map((a) => `${a.app} (${a.died!.signal ?? a.died!.code})`),
      missingRetryAfter,
      unstructuredLogLines: apps.reduce((n, a) => n + unstructuredLines(a.lines).length, 0),
      killed: { port: killed.port, replicaPort: killed.replicaPort },
      audit,
      failures: [],
    };
    figures.failures = judge(figures, apps);
    return figures;
  } finally {
    agent.destroy();
    for (const app of apps) await app.stop('SIGKILL').catch(() => undefined);
    await cluster?.stop().catch(() => undefined);
    await postgres?.destroy().catch(() => undefined);
  }
}

function judge(f: RedisFailoverFigures, apps: AppProcess[]): string[] {
  const failures: string[] = [];
  if (f.deaths.length > 0) failures.push(`processes died: ${f.deaths.join(', ')}`);
  const bad = Object.values(f.answers).flatMap((byStatus) =>
    Object.entries(byStatus).filter(([status]) => !['200', '202', '503'].includes(status)),
  );
  if (bad.length > 0) failures.push(`unexpected answers: ${JSON.stringify(bad)}`);
  if (f.missingRetryAfter > 0) failures.push(`${f.missingRetryAfter} 503s without Retry-After`);
  if (f.submissions.abandoned > 0) failures.push(`${f.submissions.abandoned} submissions never accepted`);
  if (f.lostJobs > 0) failures.push(`${f.lostJobs} accepted jobs missing`);
  if (f.untoldJobs > 0) failures.push(`${f.untoldJobs} jobs no client was told of`);
  if (f.audit.active > 0) failures.push(`${f.audit.active} jobs still queued or running`);
  if (f.audit.completed !== f.audit.jobs)
    failures.push(`${f.audit.jobs - f.audit.completed} jobs did not complete (${JSON.stringify(f.jobsByStatus)})`);
  if (f.audit.problems.length > 0) failures.push(`ledger audit: ${f.audit.problems.slice(0, 10).join('; ')}`);
  if (f.killToFirstAcceptedMs === null) failures.push('no submission sent after the kill was accepted');
  if (f.unstructuredLogLines > 0) {
    const sample = apps.flatMap((a) =>
      unstructuredLines(a.lines)
        .slice(0, 3)
        .map((l) => `${a.app}: ${l}`),
    );
    failures.push(`${f.unstructuredLogLines} log lines are not JSON, e.g. ${sample.join(' | ')}`);
  }
  return failures;
}

/** One request; null when the connection failed. */
function request(
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
    const req = http.request({ agent, host: url.hostname, port: url.port, path: url.pathname, method, headers: all }, (res) => {
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
    });
    req.on('error', () => resolve(null));
    if (body !== undefined) req.write(body);
    req.end();
  });
}

function print(f: RedisFailoverFigures): void {
  const fmt = (p: Phase) =>
    Object.entries(f.answers[p])
      .map(([s, n]) => `${s}: ${n}`)
      .join(', ') || 'none';
  const rows: Array<[string, string | number]> = [
    ['answers before the kill', fmt('before')],
    ['answers during the failover', fmt('failover')],
    ['answers after the failover', fmt('after')],
    ['master killed (port → replica promoted)', `${f.killed.port} → ${f.killed.replicaPort}`],
    ['kill to failover done (ms)', f.failoverMs],
    ['kill to first 202 of a later submission (ms)', f.killToFirstAcceptedMs ?? 'none'],
    ['kill to every job completed (s)', (f.killToDrainedMs / 1000).toFixed(1)],
    [
      'submissions (sent, accepted, resent, abandoned)',
      `${f.submissions.sent}, ${f.submissions.accepted}, ${f.submissions.retried}, ${f.submissions.abandoned}`,
    ],
    ['jobs by status', JSON.stringify(f.jobsByStatus)],
    ['jobs lost / made without a client told', `${f.lostJobs} / ${f.untoldJobs}`],
    ['ledger', `${f.audit.completed} completed, ${f.audit.billed} credits billed, ${f.audit.problems.length} problems`],
  ];
  console.log(`\ndrill: Redis Cluster master killed under load (${f.options.rate} POST /v1/jobs per second, ${f.options.workers} workers)`);
  for (const [name, value] of rows) console.log(`  ${name.padEnd(48)} ${value}`);
  for (const failure of f.failures) console.log(`  FAIL  ${failure}`);
  console.log(f.failures.length === 0 ? 'drill passed' : 'drill FAILED');
}

if (require.main === module) {
  runRedisFailoverDrill()
    .then((figures) => {
      print(figures);
      if (figures.failures.length > 0) process.exitCode = 1;
    })
    .catch((err) => {
      console.error(err);
      process.exitCode = 1;
    });
}
