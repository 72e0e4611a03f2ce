/**
 * Drill: Redis stopped for 20 s under load.
 *
 * A private Postgres and Redis; the API (in this process, over HTTP) takes POST /v1/jobs at
 * DRILL_RATE per second for the whole drill; two real worker processes run the jobs. Redis is
 * shut down (its data saved) 10 s in and started again 20 s later.
 *
 * Checks: no 5xx but 503 (rate_limiter_unavailable, with Retry-After) while Redis is down;
 * no process dies; every admitted job completes once Redis is back; the ledger is exact.
 * Figures: answers by phase, time from Redis back to the first 202 and to every job completed.
 *
 * Run: npm run drill:redis-outage   (DRILL_OUTAGE_S=20, DRILL_RATE=20, DRILL_BEFORE_S=10, DRILL_AFTER_S=15)
 */
import http from 'node:http';
import { sql } from 'kysely';
import { createApp, RedisRateLimiter } from '@sdx/app-api';
import { seedWorkspace } from '@sdx/testing';
import { checkLedger, report, sleep, startDrillEnvironment, startService, waitUntil } from './lib';

const OUTAGE_MS = Number(process.env.DRILL_OUTAGE_S ?? 20) * 1000;
const RATE = Number(process.env.DRILL_RATE ?? 20);
const BEFORE_MS = Number(process.env.DRILL_BEFORE_S ?? 10) * 1000;
const AFTER_MS = Number(process.env.DRILL_AFTER_S ?? 15) * 1000;
const TIMING = { HEARTBEAT_TIMEOUT_MS: '3000', HEARTBEAT_INTERVAL_MS: '300', RECONCILE_INTERVAL_MS: '1000', WORKER_CONCURRENCY: '8' };

type Phase = 'before' | 'during' | 'after';

async function main(): Promise<void> {
  const drill = await startDrillEnvironment('redis_outage', TIMING);
  const { runtime } = drill;
  const server = http.createServer(
    createApp({
      services: runtime.services,
      registry: runtime.registry,
      limiter: new RedisRateLimiter(runtime.redis, drill.prefix),
      redis: runtime.redis,
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const workers = [startService('worker', drill.env, 'worker-1'), startService('worker', drill.env, 'worker-2')];
  try {
    const ws = await seedWorkspace(runtime, { credits: 1_000_000, maxActiveJobs: 100_000, rateLimitPerMinute: 100_000 });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
    const answers: Record<Phase, Record<string, number>> = { before: {}, during: {}, after: {} };
    let phase: Phase = 'before';
    let backAt = 0;
    let firstAcceptedAfter = 0;
    let retryAfterMissing = 0;
    let last503After = 0;
    let seq = 0;
    const post = () =>
      new Promise<void>((resolve) => {
        const body = JSON.stringify({ platform: 'instagram', operation: 'profile', target: `outage_${seq++}_sandbox_slow_100` });
        const at = phase;
        const req = http.request(
          {
            agent,
            host: '127.0.0.1',
            port,
            path: '/v1/jobs',
            method: 'POST',
            headers: { ...ws.auth, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
          },
          (res) => {
            // A 5xx is counted with its error identifier, so a failed check says which it was.
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => {
              if ((res.statusCode ?? 0) >= 500) chunks.push(chunk);
            });
            res.on('end', () => {
              const status = String(res.statusCode);
              const error = chunks.length > 0 ? errorOf(Buffer.concat(chunks).toString()) : '';
              const key = error ? `${status} ${error}` : status;
              answers[at][key] = (answers[at][key] ?? 0) + 1;
              if (status === '503' && !res.headers['retry-after']) retryAfterMissing += 1;
              if (at === 'after' && status === '202' && firstAcceptedAfter === 0) firstAcceptedAfter = Date.now();
              if (at === 'after' && status === '503') last503After = Date.now();
              resolve();
            });
          },
        );
        req.on('error', () => {
          answers[at].error = (answers[at].error ?? 0) + 1;
          resolve();
        });
        req.end(body);
      });

    const inFlight = new Set<Promise<void>>();
    const load = (async () => {
      const started = Date.now();
      // Until AFTER_MS past Redis's return, however long stopping and starting it took.
      const loadDone = () => phase === 'after' && Date.now() - backAt >= AFTER_MS;
      for (let i = 0; !loadDone(); i++) {
        const due = started + (i * 1000) / RATE;
        if (due > Date.now()) await sleep(due - Date.now());
        const p = post();
        inFlight.add(p);
        void p.finally(() => inFlight.delete(p));
      }
      await Promise.all(inFlight);
    })();

    await sleep(BEFORE_MS);
    // The requests sent before the outage are answered before Redis stops: one still in flight
    // then would meet the outage and be counted against the phase before it.
    const sentBefore = [...inFlight];
    phase = 'during';
    await Promise.all(sentBefore);
    await drill.redis.stop({ save: true });
    const downAt = Date.now();
    await sleep(OUTAGE_MS);
    await drill.redis.start();
    backAt = Date.now();
    phase = 'after';
    await load;

    const active = async () =>
      Number(
        (await sql<{ n: number }>`select count(*)::int as n from jobs where status in ('queued', 'running')`.execute(runtime.db)).rows[0].n,
      );
    await waitUntil(async () => (await active()) === 0, 120_000, 'every admitted job completed', 200);
    const drainedMs = Date.now() - backAt;
    const alive = workers.filter((w) => w.alive()).length;
    const exits = await Promise.all(workers.map((w) => w.stop('SIGTERM')));

    const statuses = await sql<{ status: string; n: number }>`select status, count(*)::int as n from jobs group by status`.execute(
      runtime.db,
    );
    const ledger = await checkLedger(runtime.db);
    const fivexx = (phase: Phase, except: string[] = []) =>
      Object.entries(answers[phase])
        .filter(([s]) => (s.startsWith('5') && !except.includes(s.split(' ')[0])) || s === 'error')
        .reduce((n, [, c]) => n + c, 0);
    const fmt = (p: Phase) =>
      Object.entries(answers[p])
        .map(([s, n]) => `${s}: ${n}`)
        .join(', ');
    report(
      `drill: Redis stopped for ${OUTAGE_MS / 1000} s under load (${RATE} POST /v1/jobs per second)`,
      {
        'answers before the outage': fmt('before'),
        'answers while Redis was down': fmt('during'),
        'answers after Redis was back': fmt('after'),
        'Redis down (s)': ((backAt - downAt) / 1000).toFixed(1),
        'Redis back to first 202 (s)': firstAcceptedAfter ? ((firstAcceptedAfter - backAt) / 1000).toFixed(2) : 'none',
        'Redis back to every job completed (s)': (drainedMs / 1000).toFixed(1),
        'jobs by status': statuses.rows.map((r) => `${r.status}: ${r.n}`).join(', '),
      },
      [
        { name: 'no 5xx before the outage', ok: fivexx('before') === 0, detail: `${fivexx('before')}` },
        {
          name: 'after it, only 503 while the connections come back (under 5 s)',
          ok: fivexx('after', ['503']) === 0 && (last503After === 0 || last503After - backAt < 5_000),
          detail: `${fivexx('after', ['503'])} other 5xx; last 503 ${last503After ? `${last503After - backAt} ms` : 'none'} after Redis was back`,
        },
        {
          name: 'only 503 (with Retry-After) while Redis was down',
          ok: fivexx('during', ['503']) === 0 && retryAfterMissing === 0,
          detail: `${fivexx('during', ['503'])} other, ${retryAfterMissing} without Retry-After`,
        },
        {
          name: 'no worker died',
          ok: alive === workers.length && exits.every((e) => e.code === 0),
          detail: `${alive}/${workers.length} alive; exits ${exits.map((e) => e.code ?? e.signal).join(', ')}`,
        },
        {
          name: 'every admitted job completed',
          ok: ledger.active === 0 && ledger.failed === 0 && ledger.completed === ledger.jobs,
          detail: `${ledger.completed}/${ledger.jobs}`,
        },
        {
          name: 'admissions resumed within 5 s of Redis back',
          ok: firstAcceptedAfter > 0 && firstAcceptedAfter - backAt < 5_000,
          detail: firstAcceptedAfter ? `${firstAcceptedAfter - backAt} ms` : 'never',
        },
      ],
      ledger,
    );
    agent.destroy();
  } finally {
    for (const w of workers) await w.stop('SIGKILL');
    server.close();
    server.closeAllConnections();
    await drill.destroy();
  }
}

/** The error identifier of an error body (`detail.error`), or '' when there is none. */
function errorOf(body: string): string {
  try {
    const parsed = JSON.parse(body) as { detail?: { error?: unknown } };
    return typeof parsed.detail?.error === 'string' ? parsed.detail.error : '';
  } catch {
    return '';
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
