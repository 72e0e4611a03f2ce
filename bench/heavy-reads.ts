/**
 * Heavy-reads benchmark: a 25,000-item result (twitter followers) read by slow and by fast
 * clients from a real API process (apps/api, its own node process, so its RSS is its own).
 *
 * (1) Memory: BENCH_READERS (90) slow clients of one workspace download it at once, each reading about 64 KB/s,
 *     for BENCH_SLOW_SECONDS (20 s): first as csv exports, then as GET /v1/jobs/{id} (json).
 *     The API's RSS is sampled every 100 ms (/proc); the figure is the peak over the RSS before
 *     the readers (after warm-up reads). Every reader must get 200 and still be reading at the
 *     end (the whole download takes minutes at that pace). The per-workspace bound on heavy
 *     reads is raised to 100 for this part (HEAVY_READS_PER_WORKSPACE): all 90 readers belong
 *     to one workspace, and what is measured is what streaming holds per reader.
 * (2) Fairness: tenant B polls a small job at BENCH_B_RATE (5/s); its latencies are recorded
 *     idle for BENCH_FAIR_SECONDS (20 s), then while tenant A polls the 25,000-item job at its
 *     full rate limit (600/min: 10/s, open loop, each response read whole and dropped), with the
 *     default bounds (2 heavy reads per workspace, A's requests beyond them get 429; heavy reads'
 *     slice queries on a pool of HEAVY_READ_CONNECTIONS, 1). A is another client: it polls from
 *     a thread of its own, so reading its bodies does not delay the handling of B's answers.
 *
 * The API is started as `npm start` starts it, with its heap bound (MAX_HEAP_MB, 1,024 MB); its
 * main sets its heap growth (HEAP_GROWTH_PERCENT, 100). Both, and HEAVY_READ_CONNECTIONS, can be
 * changed for a run through this environment.
 *
 * Targets: (1) under 150 MB of added RSS in each phase; (2) B's p95 under load ≤ 2 × its idle
 * p95. Exits with code 1 when one is missed.
 *
 * Run: npm run bench:heavy-reads   (uses DATABASE_URL's server and REDIS_URL; a fresh database)
 *      BENCH_PARTS=fairness (or memory) runs one part only; BENCH_API_STDOUT=1 shows the API's
 *      standard output (with BENCH_API_NODE_ARGS=--trace-gc, its collections).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { startWorker } from '@sdx/app-worker';
import { loadConfig, nodeHeapArgs } from '@sdx/config';
import { createRuntime, untilRedisReady } from '@sdx/runtime';
import { benchPrefix, benchRedisUrl, createBenchDatabase } from './lib/db';
import { freePortFor, readAll, sleep } from './lib/heavy';
import { seedBenchWorkspace } from './lib/seed';
import { ms, summarize, table, verdict } from './lib/stats';
import { TEST_SECRETS_KEY } from '@sdx/testing';

const READERS = Number(process.env.BENCH_READERS ?? 90);
const SLOW_SECONDS = Number(process.env.BENCH_SLOW_SECONDS ?? 20);
const FAIR_SECONDS = Number(process.env.BENCH_FAIR_SECONDS ?? 20);
const B_RATE = Number(process.env.BENCH_B_RATE ?? 5);
const A_RATE = 10;
/** Which parts run: memory, fairness or both (the default). */
const PARTS = new Set((process.env.BENCH_PARTS ?? 'memory,fairness').split(',').map((part) => part.trim()));
const ITEMS = 25_000;
const MAX_ADDED_MB = 150;
const ROOT = path.resolve(__dirname, '..');

/** The settings of the API under test this environment may change (unset: the defaults). */
const API_SETTINGS = {
  MAX_HEAP_MB: process.env.MAX_HEAP_MB ?? '',
  HEAP_GROWTH_PERCENT: process.env.HEAP_GROWTH_PERCENT ?? '',
  HEAVY_READ_CONNECTIONS: process.env.HEAVY_READ_CONNECTIONS ?? '',
};
const API_CONFIG = loadConfig({ LOG_LEVEL: 'silent', ...API_SETTINGS });

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

async function startApi(env: Record<string, string>): Promise<{ proc: ChildProcess; url: string; stop(): Promise<void> }> {
  const port = await freePortFor();
  // Started as `npm start` starts it (its heap bound, MAX_HEAP_MB), plus BENCH_API_NODE_ARGS.
  const nodeArgs = [...nodeHeapArgs(API_CONFIG), ...(process.env.BENCH_API_NODE_ARGS ?? '').split(' ').filter(Boolean)];
  const proc = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'apps/api/src/main.ts'], {
    cwd: ROOT,
    stdio: ['ignore', process.env.BENCH_API_STDOUT ? 'inherit' : 'ignore', 'inherit'],
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      NODE_ENV: 'production',
      SECRETS_KEY: TEST_SECRETS_KEY,
      PROVIDER_MODE: 'sandbox',
      LOG_LEVEL: 'warn',
      ...API_SETTINGS,
      PORT: String(port),
      ...env,
    },
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ok = await readAll(`${url}/healthz`, {}).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) throw new Error('the API did not start');
    await sleep(100);
  }
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return {
    proc,
    url,
    async stop() {
      proc.kill('SIGTERM');
      await exited;
    },
  };
}

/** A client reading `url` at about `bytesPerSecond`; resolves the status once headers arrive. */
function slowReader(url: string, headers: Record<string, string>, bytesPerSecond: number, agent: http.Agent) {
  let received = 0;
  let ended = false;
  let request: http.ClientRequest | null = null;
  const started = new Promise<number>((resolve, reject) => {
    request = http.get(url, { headers, agent }, (res) => {
      resolve(res.statusCode ?? 0);
      const begun = Date.now();
      res.on('data', (chunk: Buffer) => {
        received += chunk.length;
        const due = begun + (received / bytesPerSecond) * 1000;
        const wait = due - Date.now();
        if (wait > 0) {
          res.pause();
          setTimeout(() => res.resume(), wait);
        }
      });
      res.on('end', () => (ended = true));
      res.on('error', () => undefined);
    });
    request.on('error', reject);
  });
  return {
    started,
    received: () => received,
    ended: () => ended,
    abort: () => request?.destroy(),
  };
}

async function memoryPhase(
  api: { proc: ChildProcess; url: string },
  path: string,
  headers: Record<string, string>,
): Promise<{ baseline: number; peak: number; ok: number; reading: number; minKb: number }> {
  // Warm up: a few whole reads, then let the process settle.
  for (let i = 0; i < 3; i++) await readAll(`${api.url}${path}`, headers);
  await sleep(2_000);
  const baseline = rssMb(api.proc.pid!);
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(api.proc.pid!));
  }, 100);
  const agent = new http.Agent({ keepAlive: false, maxSockets: READERS + 10 });
  const readers = Array.from({ length: READERS }, () => slowReader(`${api.url}${path}`, headers, 64 * 1024, agent));
  const statuses = await Promise.all(readers.map((r) => r.started.catch(() => 0)));
  await sleep(SLOW_SECONDS * 1000);
  clearInterval(sampler);
  peak = Math.max(peak, rssMb(api.proc.pid!));
  const reading = readers.filter((r) => !r.ended() && r.received() > 0).length;
  const minKb = Math.min(...readers.map((r) => r.received())) / 1024;
  for (const r of readers) r.abort();
  agent.destroy();
  await sleep(1_000);
  return { baseline, peak, ok: statuses.filter((s) => s === 200).length, reading, minKb };
}

/** Open-loop GETs at `rate` per second for `seconds`; latencies of 200 answers, counts by status. */
async function poll(url: string, headers: Record<string, string>, rate: number, seconds: number, agent: http.Agent) {
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const inFlight: Array<Promise<void>> = [];
  const start = performance.now();
  for (let i = 0; i < rate * seconds; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    inFlight.push(
      readAll(url, headers, agent).then(
        (r) => {
          statuses[r.status] = (statuses[r.status] ?? 0) + 1;
          if (r.status === 200) latencies.push(performance.now() - due);
        },
        () => {
          statuses.error = (statuses.error ?? 0) + 1;
        },
      ),
    );
  }
  await Promise.all(inFlight);
  return { latencies, statuses };
}

/**
 * `poll` from a thread of its own: tenant A is another client, so reading its large bodies
 * must not delay the handling of B's answers (and so B's measured latency) in this thread.
 */
function pollElsewhere(
  url: string,
  headers: Record<string, string>,
  rate: number,
  seconds: number,
): Promise<{ statuses: Record<string, number> }> {
  const source = `
    const http = require('node:http');
    const { parentPort, workerData: { url, headers, rate, seconds } } = require('node:worker_threads');
    const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
    const statuses = {};
    const inFlight = [];
    const start = performance.now();
    (async () => {
      for (let i = 0; i < rate * seconds; i++) {
        const wait = start + (i * 1000) / rate - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        inFlight.push(new Promise((resolve) => {
          http.get(url, { headers, agent }, (res) => {
            res.on('data', () => undefined);
            res.on('end', () => { statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1; resolve(); });
            res.on('error', () => { statuses.error = (statuses.error ?? 0) + 1; resolve(); });
          }).on('error', () => { statuses.error = (statuses.error ?? 0) + 1; resolve(); });
        }));
      }
      await Promise.all(inFlight);
      agent.destroy();
      parentPort.postMessage(statuses);
    })();
  `;
  return new Promise((resolve, reject) => {
    const worker = new Worker(source, { eval: true, workerData: { url, headers, rate, seconds } });
    worker.once('message', (statuses: Record<string, number>) => resolve({ statuses }));
    worker.once('error', reject);
  });
}

type MemoryFigures = Awaited<ReturnType<typeof memoryPhase>>;

/** Prints part (1); whether its target is met. */
function memoryPart(csv: MemoryFigures, json: MemoryFigures): boolean {
  const memOk = (m: MemoryFigures) => m.peak - m.baseline < MAX_ADDED_MB && m.ok === READERS && m.reading === READERS;
  console.log(`\n(1) ${READERS} slow readers (about 64 KB/s each) for ${SLOW_SECONDS} s; API RSS (MB)`);
  console.log(
    table([
      ['download', 'before', 'peak', 'added', '200s', 'still reading', 'least read', 'target', 'result'],
      ...(
        [
          ['csv export', csv],
          ['GET job (json)', json],
        ] as const
      ).map(([name, x]) => [
        name,
        x.baseline.toFixed(0),
        x.peak.toFixed(0),
        (x.peak - x.baseline).toFixed(1),
        String(x.ok),
        String(x.reading),
        `${x.minKb.toFixed(0)} KB`,
        `< ${MAX_ADDED_MB} MB`,
        verdict(memOk(x)),
      ]),
    ]),
  );
  return memOk(csv) && memOk(json);
}

/** Part (2): B's latencies idle, then while A polls the big job from another thread; prints them, and whether the target is met. */
async function fairnessPart(
  url: string,
  bigId: string,
  smallId: string,
  headersA: Record<string, string>,
  headersB: Record<string, string>,
): Promise<boolean> {
  const agentB = new http.Agent({ keepAlive: true, maxSockets: 16 });
  const agentA = new http.Agent({ keepAlive: true, maxSockets: 64 });
  await poll(`${url}/v1/jobs/${smallId}`, headersB, B_RATE, 3, agentB);
  await readAll(`${url}/v1/jobs/${bigId}`, headersA, agentA);
  const idle = await poll(`${url}/v1/jobs/${smallId}`, headersB, B_RATE, FAIR_SECONDS, agentB);
  const [loaded, aPoll] = await Promise.all([
    poll(`${url}/v1/jobs/${smallId}`, headersB, B_RATE, FAIR_SECONDS, agentB),
    pollElsewhere(`${url}/v1/jobs/${bigId}`, headersA, A_RATE, FAIR_SECONDS),
  ]);
  agentA.destroy();
  agentB.destroy();

  const idleS = summarize(idle.latencies);
  const loadedS = summarize(loaded.latencies);
  const p95 = (xs: number[]) => {
    const sorted = [...xs].sort((x, y) => x - y);
    return sorted[Math.min(sorted.length - 1, Math.ceil(0.95 * sorted.length) - 1)] ?? Number.NaN;
  };
  const idleP95 = p95(idle.latencies);
  const loadedP95 = p95(loaded.latencies);
  const fairOk = loadedP95 <= 2 * idleP95 && (loaded.statuses['200'] ?? 0) === B_RATE * FAIR_SECONDS;
  console.log(
    `\n(2) tenant B polls a small job at ${B_RATE}/s; tenant A polls the ${ITEMS}-item job at ${A_RATE}/s (its full rate limit) for ${FAIR_SECONDS} s`,
  );
  console.log(
    table([
      ['tenant B', 'n', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms'],
      ['idle', String(idleS.count), ms(idleS.p50), ms(idleP95), ms(idleS.p99), ms(idleS.max)],
      ['A polling', String(loadedS.count), ms(loadedS.p50), ms(loadedP95), ms(loadedS.p99), ms(loadedS.max)],
    ]),
  );
  console.log(
    `  tenant A's answers: ${Object.entries(aPoll.statuses)
      .map(([s, n]) => `${s}: ${n}`)
      .join(', ')}`,
  );
  console.log(
    `  tenant B's answers: ${Object.entries(loaded.statuses)
      .map(([s, n]) => `${s}: ${n}`)
      .join(', ')}`,
  );
  console.log(`  target: B's p95 under load ≤ 2 × idle (${ms(2 * idleP95)} ms): ${verdict(fairOk)}`);
  return fairOk;
}

async function main(): Promise<void> {
  const database = await createBenchDatabase('heavy');
  const prefix = benchPrefix('heavy');
  const env = { DATABASE_URL: database.url, REDIS_URL: benchRedisUrl(), REDIS_PREFIX: prefix };
  const runtime = createRuntime(loadConfig({ ...env, LOG_LEVEL: 'silent' }), { name: 'bench-heavy', dbPoolSize: 8 });
  let api: Awaited<ReturnType<typeof startApi>> | null = null;
  try {
    await untilRedisReady(runtime);
    // C reads for the memory part (ample rate limit); A polls at its plan's rate limit (600/min).
    const c = await seedBenchWorkspace(runtime, { name: 'tenant C', credits: 1_000_000, rateLimitPerMinute: 1_000_000 });
    const a = await seedBenchWorkspace(runtime, { name: 'tenant A', credits: 1_000_000, rateLimitPerMinute: 600 });
    const b = await seedBenchWorkspace(runtime, { name: 'tenant B', credits: 1_000 });
    const worker = startWorker({
      services: runtime.services,
      providers: runtime.registry,
      redisUrl: env.REDIS_URL,
      concurrency: 2,
      reconcile: false,
    });
    api = await startApi({ ...env, HEAVY_READS_PER_WORKSPACE: '100' });
    const post = async (key: string, body: object) => {
      const res = await readAll(
        `${api!.url}/v1/jobs`,
        { 'X-API-Key': key, 'content-type': 'application/json' },
        undefined,
        JSON.stringify(body),
      );
      if (res.status !== 202) throw new Error(`POST /v1/jobs answered ${res.status}: ${res.body}`);
      return JSON.parse(res.body) as { id: string };
    };
    const bigC = await post(c.apiKey, { platform: 'twitter', operation: 'followers', target: 'heavyreader', limit: ITEMS });
    const big = await post(a.apiKey, { platform: 'twitter', operation: 'followers', target: 'heavypoller', limit: ITEMS });
    const small = await post(b.apiKey, { platform: 'twitter', operation: 'profile', target: 'tenantb' });
    for (;;) {
      const rows = await runtime.db.selectFrom('jobs').select('status').where('id', 'in', [bigC.id, big.id, small.id]).execute();
      if (rows.every((r) => r.status === 'completed')) break;
      await sleep(200);
    }
    await worker.close();
    const headersA = { 'X-API-Key': a.apiKey };
    const headersB = { 'X-API-Key': b.apiKey };
    const headersC = { 'X-API-Key': c.apiKey };

    console.log(
      `heavy-reads benchmark: a ${ITEMS}-item result, node ${process.version}, API started with ${nodeHeapArgs(API_CONFIG).join(' ')} (MAX_HEAP_MB), HEAP_GROWTH_PERCENT=${API_CONFIG.heapGrowthPercent}, HEAVY_READ_CONNECTIONS=${API_CONFIG.heavyReadConnections}`,
    );
    let ok = true;
    if (PARTS.has('memory'))
      ok =
        memoryPart(
          await memoryPhase(api, `/v1/jobs/${bigC.id}/export?format=csv`, headersC),
          await memoryPhase(api, `/v1/jobs/${bigC.id}`, headersC),
        ) && ok;
    await api.stop();
    if (PARTS.has('fairness')) {
      // Fairness, with the default bound.
      api = await startApi(env);
      ok = (await fairnessPart(api.url, big.id, small.id, headersA, headersB)) && ok;
    }
    console.log(ok ? '\nall targets met' : '\ntargets missed');
    process.exitCode = ok ? 0 : 1;
  } finally {
    await api?.stop().catch(() => undefined);
    await runtime.queues.jobs.obliterate({ force: true }).catch(() => undefined);
    await runtime.close();
    await database.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
