/**
 * MCP benchmark: the `/mcp` endpoint (a stateless server and transport per request, the tool
 * answered as an event stream) against the REST call it stands for, in the same run.
 *
 * The API and a worker run as their own processes (apps/api, apps/worker, as in production); this
 * process seeds a workspace, makes two jobs through the REST API (a 10-follower job, and a
 * BENCH_ITEMS (5,000) follower job to page through), and generates the load over keep-alive
 * connections. Each MCP call is one `tools/call` POST with `Accept: application/json,
 * text/event-stream`, as the SDK's client sends it; its answer is read whole and checked (a
 * result, not a tool error).
 *
 * Measured:
 * 1. Throughput, closed loop (BENCH_CONCURRENCY, 16, loops for BENCH_SECONDS, 5 s each), two
 *    rounds interleaved: `GET /v1/jobs/{job_id}` of the small job (the baseline) and MCP
 *    `get_job` of the same job. Target: MCP ≥ 0.5 × REST.
 * 2. MCP `get_job` latency at 100 calls a second (open loop, BENCH_SECONDS × 2; latency from each
 *    call's scheduled time, so queueing counts). Target: p99 < 50 ms.
 * 3. MCP `get_items` of 100 items at 50 calls a second (open loop), cycling through the big
 *    job's pages. Target: p99 < 100 ms.
 *
 * Exits with code 1 when a target is missed.
 *
 * Run: npm run bench:mcp   (BENCH_CONCURRENCY, BENCH_SECONDS, BENCH_ITEMS; DATABASE_URL / REDIS_URL)
 */
import { performance } from 'node:perf_hooks';
import { loadConfig } from '@sdx/config';
import { createRuntime } from '@sdx/runtime';
import { freePort } from '@sdx/testing';
import { startService } from './drills/lib';
import { benchPrefix, benchRedisUrl, createBenchDatabase } from './lib/db';
import { keepAliveAgent, type Reply, send, type SentRequest } from './lib/http';
import { AMPLE, seedBenchWorkspace, waitFor } from './lib/seed';
import { ms, summarize, table, verdict } from './lib/stats';

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ITEMS = Number(process.env.BENCH_ITEMS ?? 5000);
const TARGET_RATIO = 0.5;
const TARGET_GET_JOB_P99_MS = 50;
const TARGET_GET_ITEMS_P99_MS = 100;

const MCP_HEADERS = { Accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };

/** A tools/call message. */
function toolCall(id: number, name: string, args: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
}

/** The JSON-RPC result of an MCP answer (an event stream or JSON); throws on a protocol or tool error. */
function resultOf(reply: Reply): { structuredContent: Record<string, unknown> } {
  if (reply.status !== 200) throw new Error(`mcp: ${reply.status} ${reply.body.slice(0, 300)}`);
  const data = reply.body.trimStart().startsWith('{')
    ? reply.body
    : reply.body
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .pop();
  const message = JSON.parse(data ?? 'null') as {
    result?: { isError?: boolean; structuredContent: Record<string, unknown> };
    error?: unknown;
  } | null;
  if (!message?.result || message.result.isError) throw new Error(`mcp: ${reply.body.slice(0, 300)}`);
  return message.result;
}

async function main(): Promise<void> {
  const database = await createBenchDatabase('mcp');
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: database.url,
    REDIS_URL: benchRedisUrl(),
    REDIS_PREFIX: benchPrefix('mcp'),
    LOG_LEVEL: 'silent',
    SEED_DEMO: '0',
  });
  const runtime = createRuntime(config, { name: 'bench-mcp', dbPoolSize: 4 });
  const port = await freePort();
  const env = {
    NODE_ENV: 'development',
    PORT: String(port),
    DATABASE_URL: database.url,
    REDIS_URL: config.redisUrl,
    REDIS_PREFIX: config.redisPrefix,
    LOG_LEVEL: 'silent',
    SEED_DEMO: '0',
  };
  const api = startService('api', env);
  const worker = startService('worker', env);
  const agent = keepAliveAgent(CONCURRENCY * 2 + 64);
  const base = `http://127.0.0.1:${port}`;
  let failed = false;
  try {
    await waitFor(() => runtime.redis.status === 'ready', 5000, 'Redis');
    for (let ready = false; !ready; await new Promise((resolve) => setTimeout(resolve, 100))) {
      ready = (await send(agent, base, { method: 'GET', path: '/readyz' }).catch(() => null))?.status === 200;
    }
    const ws = await seedBenchWorkspace(runtime, { name: 'bench mcp', ...AMPLE });
    const auth = { 'X-API-Key': ws.apiKey };
    const create = async (target: string, limit: number) => {
      const reply = await send(agent, base, {
        method: 'POST',
        path: '/v1/jobs',
        headers: auth,
        body: JSON.stringify({ platform: 'twitter', operation: 'followers', target, limit }),
      });
      if (reply.status !== 202) throw new Error(`create: ${reply.status} ${reply.body.slice(0, 300)}`);
      return (JSON.parse(reply.body) as { id: string }).id;
    };
    const small = await create('bench_mcp_small', 10);
    const big = await create('bench_mcp_big', ITEMS);
    for (const id of [small, big]) {
      for (let done = false; !done; await new Promise((resolve) => setTimeout(resolve, 200))) {
        done =
          (JSON.parse((await send(agent, base, { method: 'GET', path: `/v1/jobs/${id}`, headers: auth })).body) as { status: string })
            .status === 'completed';
      }
    }
    const mcp = (id: number, name: string, args: Record<string, unknown>): SentRequest => ({
      method: 'POST',
      path: '/mcp',
      headers: { ...auth, ...MCP_HEADERS },
      body: toolCall(id, name, args),
    });
    // The handshake a client makes first (the stateless server keeps nothing of it).
    const init = await send(agent, base, {
      method: 'POST',
      path: '/mcp',
      headers: { ...auth, Accept: MCP_HEADERS.Accept },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
      }),
    });
    if (init.status !== 200) throw new Error(`initialize: ${init.status} ${init.body.slice(0, 300)}`);

    // The big job's page cursors, for get_items calls spread over the result.
    const cursors: Array<string | null> = [null];
    for (let cursor: string | null = null; ;) {
      const page = resultOf(
        await send(agent, base, mcp(1, 'get_items', { job_id: big, limit: 100, ...(cursor ? { cursor } : {}) })),
      ).structuredContent;
      if ((page.items as unknown[]).length !== 100 && page.next_cursor !== null)
        throw new Error('get_items: a page of fewer than 100 items');
      cursor = page.next_cursor as string | null;
      if (cursor === null) break;
      cursors.push(cursor);
    }

    const rest: SentRequest = { method: 'GET', path: `/v1/jobs/${small}`, headers: auth };
    const checkRest = (reply: Reply) => {
      if (reply.status !== 200) throw new Error(`rest: ${reply.status} ${reply.body.slice(0, 300)}`);
    };
    const checkMcp = (reply: Reply) => void resultOf(reply);

    /** Calls per second of `CONCURRENCY` loops sending `request` for SECONDS. */
    const closedLoop = async (request: (i: number) => SentRequest, check: (reply: Reply) => void, seconds = SECONDS): Promise<number> => {
      const started = performance.now();
      const deadline = started + seconds * 1000;
      let calls = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (performance.now() < deadline) {
            check(await send(agent, base, request(calls)));
            calls += 1;
          }
        }),
      );
      return calls / ((performance.now() - started) / 1000);
    };
    /** Latencies (from each call's scheduled time) of `rate` calls a second for `seconds`. */
    const openLoop = async (
      rate: number,
      seconds: number,
      request: (i: number) => SentRequest,
      check: (reply: Reply) => void,
    ): Promise<number[]> => {
      const latencies: number[] = [];
      const start = performance.now() + 50;
      const runs: Array<Promise<void>> = [];
      for (let i = 0; i < rate * seconds; i += 1) {
        const at = start + (i * 1000) / rate;
        const wait = at - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        runs.push(
          send(agent, base, request(i)).then((reply) => {
            check(reply);
            latencies.push(performance.now() - at);
          }),
        );
      }
      await Promise.all(runs);
      return latencies;
    };

    const getJob = (i: number) => mcp(i, 'get_job', { job_id: small });
    console.log(`mcp: warming up (${CONCURRENCY} loops, 2 s each)...`);
    await closedLoop(() => rest, checkRest, 2);
    await closedLoop(getJob, checkMcp, 2);
    console.log(`throughput: ${CONCURRENCY} loops, ${SECONDS} s per run, REST and MCP interleaved, two rounds...`);
    const restRates: number[] = [];
    const mcpRates: number[] = [];
    for (let round = 0; round < 2; round += 1) {
      restRates.push(await closedLoop(() => rest, checkRest));
      mcpRates.push(await closedLoop(getJob, checkMcp));
    }
    const restRate = restRates.reduce((a, b) => a + b, 0) / restRates.length;
    const mcpRate = mcpRates.reduce((a, b) => a + b, 0) / mcpRates.length;
    console.log('latency: MCP get_job at 100 calls/s...');
    const jobLatency = summarize(await openLoop(100, SECONDS * 2, getJob, checkMcp));
    console.log('latency: MCP get_items (100 items) at 50 calls/s...');
    const itemsLatency = summarize(
      await openLoop(
        50,
        SECONDS * 2,
        (i) =>
          mcp(i, 'get_items', { job_id: big, limit: 100, ...(cursors[i % cursors.length] ? { cursor: cursors[i % cursors.length] } : {}) }),
        checkMcp,
      ),
    );

    const ratio = mcpRate / restRate;
    console.log(
      `\n${table([
        ['throughput (closed loop)', 'calls/s', 'rounds'],
        ['GET /v1/jobs/{job_id} (baseline)', restRate.toFixed(0), restRates.map((r) => r.toFixed(0)).join(' / ')],
        ['MCP get_job', mcpRate.toFixed(0), mcpRates.map((r) => r.toFixed(0)).join(' / ')],
      ])}\n\n${table([
        ['open loop', 'n', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
        ['MCP get_job at 100/s', String(jobLatency.count), ms(jobLatency.p50), ms(jobLatency.p90), ms(jobLatency.p99), ms(jobLatency.max)],
        [
          'MCP get_items (100 items) at 50/s',
          String(itemsLatency.count),
          ms(itemsLatency.p50),
          ms(itemsLatency.p90),
          ms(itemsLatency.p99),
          ms(itemsLatency.max),
        ],
      ])}`,
    );
    const checks = [
      [`MCP get_job throughput ${ratio.toFixed(2)} × REST (target ≥ ${TARGET_RATIO})`, ratio >= TARGET_RATIO],
      [`MCP get_job p99 ${ms(jobLatency.p99)} ms at 100/s (target < ${TARGET_GET_JOB_P99_MS} ms)`, jobLatency.p99 < TARGET_GET_JOB_P99_MS],
      [`MCP get_items p99 ${ms(itemsLatency.p99)} ms (target < ${TARGET_GET_ITEMS_P99_MS} ms)`, itemsLatency.p99 < TARGET_GET_ITEMS_P99_MS],
    ] as const;
    console.log('');
    for (const [what, ok] of checks) console.log(`${what}: ${verdict(ok)}`);
    failed = checks.some(([, ok]) => !ok);
  } finally {
    agent.destroy();
    await api.stop('SIGTERM');
    await worker.stop('SIGTERM');
    await runtime.close();
    await database.drop();
  }
  if (failed) process.exitCode = 1;
}

void main().catch((error) => {
  console.error(error);
  process.exit(1);
});
