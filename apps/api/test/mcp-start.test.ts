import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createDb } from '@sdx/db';
import { ensureMonthPartition } from '@sdx/domain/testing';
import { createTestDatabase, eventually, type LooseJson } from '@sdx/testing';

/**
 * The MCP server of `npm start` (API, worker and scheduler processes as deployed), through the
 * SDK's Client over Streamable HTTP, with MCP_MAX_OUTPUT_BYTES set low: every tool answers
 * within the bound (text and structured content each), a viewer key is refused what a viewer
 * may not do, a workspace out of credits is told so, bad input is a tool error, and the items
 * an answer leaves out are all reached through next_cursor, none lost or repeated.
 */
const ROOT = path.resolve(__dirname, '../../..');
const BOUND = 4000;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

type Result = CallToolResult & { structuredContent: Record<string, LooseJson> };

let child: ChildProcess | null = null;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let base: string;
let ownerKey: string;
let viewerKey: string;
const clients: Client[] = [];
/** Every result any call of this file received, checked against the bound at the end. */
const results: Array<{ name: string; result: Result }> = [];

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: 'mcp-start-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }),
  );
  clients.push(client);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Result> {
  const result = (await client.callTool({ name, arguments: args })) as Result;
  results.push({ name, result });
  return result;
}

beforeAll(async () => {
  database = await createTestDatabase();
  const port = await freePort();
  child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts', 'start.ts')], {
    cwd: ROOT,
    detached: true,
    env: {
      ...process.env,
      DATABASE_URL: database.url,
      PORT: String(port),
      REDIS_PREFIX: `sdxmcp${randomBytes(3).toString('hex')}`,
      LOG_LEVEL: 'silent',
      NODE_ENV: 'development',
      MCP_MAX_OUTPUT_BYTES: String(BOUND),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (chunk) => (out += chunk.toString()));
  ownerKey = await eventually(() => /API key \(shown once, keep it\): (\S+)/.exec(out)?.[1], 60_000);
  base = `http://127.0.0.1:${port}`;
  const created = await eventually(
    async () => {
      const res = await fetch(`${base}/v1/keys`, {
        method: 'POST',
        headers: { 'X-API-Key': ownerKey, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'agent', role: 'viewer' }),
      });
      return res.status === 201 ? res : undefined;
    },
    60_000,
    200,
  );
  viewerKey = ((await created.json()) as { api_key: string }).api_key;
}, 120_000);
afterAll(async () => {
  for (const client of clients) await client.close();
  if (child?.pid && child.exitCode === null) {
    process.kill(-child.pid, 'SIGTERM');
    await new Promise((resolve) => child!.once('exit', resolve));
  }
  await database.drop();
});

it('serves every tool, bounds every answer, refuses a viewer and an empty balance, and pages without loss', async () => {
  const owner = await connect(ownerKey);
  const viewer = await connect(viewerKey);

  // list_operations: more operations than fit in the bound come in pages.
  const operations: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page: Result = await call(viewer, 'list_operations', cursor ? { cursor } : {});
    pages += 1;
    expect(page.isError).toBeFalsy();
    expect(page.structuredContent.truncated).toBe(page.structuredContent.next_cursor !== null);
    operations.push(
      ...(page.structuredContent.operations as Array<{ platform: string; operation: string }>).map((o) => `${o.platform}/${o.operation}`),
    );
    cursor = page.structuredContent.next_cursor;
  } while (cursor !== null);
  expect(pages).toBeGreaterThan(1);
  expect(new Set(operations).size).toBe(operations.length);
  const catalog = (await (await fetch(`${base}/v1/platforms`)).json()) as Array<{
    platform: string;
    operations: Array<{ operation: string }>;
  }>;
  expect(operations).toEqual(catalog.flatMap((p) => p.operations.map((o) => `${p.platform}/${o.operation}`)));
  expect((await call(owner, 'list_operations', { platform: ['x'] })).structuredContent.error).toBe('validation_error');

  // quote: success, bad input, viewer refused.
  expect(
    (await call(owner, 'quote', { platform: 'twitter', operation: 'followers', target: 'nasa', limit: 100 })).structuredContent,
  ).toMatchObject({ max_credits: 200, affordable: true });
  expect((await call(owner, 'quote', { platform: 'twitter', operation: 'followers' })).structuredContent.error).toBe('validation_error');
  expect((await call(viewer, 'quote', { platform: 'twitter', operation: 'followers', target: 'nasa' })).structuredContent.error).toBe(
    'forbidden',
  );

  // extract: 150 items do not fit in 4000 bytes: the first ones come, then get_items goes on from next_cursor.
  const extracted = await call(owner, 'extract', { platform: 'twitter', operation: 'followers', target: 'mcp_bound', limit: 150 });
  expect(extracted.structuredContent).toMatchObject({ completed: true, truncated: true, next_cursor: expect.any(String) });
  const jobId = extracted.structuredContent.job.id as string;
  const ids = (extracted.structuredContent.items as Array<{ id: string }>).map((i) => i.id);
  expect(ids.length).toBeGreaterThan(0);
  cursor = extracted.structuredContent.next_cursor;
  while (cursor !== null) {
    const page: Result = await call(viewer, 'get_items', { job_id: jobId, cursor });
    expect(page.isError).toBeFalsy();
    expect(page.structuredContent.skipped_oversized).toBe(0);
    ids.push(...(page.structuredContent.items as Array<{ id: string }>).map((i) => i.id));
    cursor = page.structuredContent.next_cursor;
  }
  const whole = (await (await fetch(`${base}/v1/jobs/${jobId}/items?limit=1000`, { headers: { 'X-API-Key': ownerKey } })).json()) as {
    items: Array<{ id: string }>;
  };
  expect(ids).toEqual(whole.items.map((i) => i.id));
  expect(ids).toHaveLength(150);
  expect(
    (await call(owner, 'extract', { platform: 'twitter', operation: 'followers', target: 'x', limit: 0 })).structuredContent.error,
  ).toBe('validation_error');
  expect((await call(viewer, 'extract', { platform: 'twitter', operation: 'followers', target: 'x' })).structuredContent.error).toBe(
    'forbidden',
  );
  expect((await call(owner, 'get_items', { job_id: jobId, limit: 0 })).structuredContent.error).toBe('validation_error');

  // get_job, get_usage: success and bad input.
  expect((await call(viewer, 'get_job', { job_id: jobId })).structuredContent.job).toMatchObject({
    id: jobId,
    status: 'completed',
    result_count: 150,
  });
  expect((await call(viewer, 'get_job', { job_id: 42 })).structuredContent.error).toBe('validation_error');
  expect((await call(viewer, 'get_usage')).structuredContent).toMatchObject({
    credits_used: expect.any(Number),
    credits_remaining: expect.any(Number),
  });
  expect((await call(viewer, 'get_usage', { workspace: 'other' })).structuredContent.error).toBe('validation_error');

  // start_job and cancel_job: the rest of the demo's 100,000 credits reserved by two jobs (2 credits a follower); a third is insufficient_credits.
  const first = await call(owner, 'start_job', { platform: 'twitter', operation: 'followers', target: 'mcp_fill_1', limit: 25_000 });
  const left = (await call(owner, 'get_usage')).structuredContent.credits_remaining as number;
  const second = await call(owner, 'start_job', {
    platform: 'twitter',
    operation: 'followers',
    target: 'mcp_fill_2',
    limit: Math.floor(left / 2),
  });
  expect(first.isError).toBeFalsy();
  expect(second.isError).toBeFalsy();
  const third = await call(owner, 'start_job', { platform: 'twitter', operation: 'followers', target: 'mcp_fill_3', limit: 10 });
  expect(third).toMatchObject({ isError: true, structuredContent: { error: 'insufficient_credits' } });
  expect(
    (await call(owner, 'extract', { platform: 'twitter', operation: 'followers', target: 'mcp_fill_4', limit: 10 })).structuredContent
      .error,
  ).toBe('insufficient_credits');
  expect(
    (await call(viewer, 'start_job', { platform: 'twitter', operation: 'followers', target: 'mcp_viewer' })).structuredContent.error,
  ).toBe('forbidden');
  expect(
    (await call(owner, 'start_job', { platform: 'twitter', operation: 'followers', target: 'x', idempotency_key: '' })).structuredContent
      .error,
  ).toBe('validation_error');
  const secondId = second.structuredContent.job.id as string;
  expect((await call(viewer, 'cancel_job', { job_id: secondId })).structuredContent.error).toBe('forbidden');
  expect((await call(owner, 'cancel_job', {})).structuredContent.error).toBe('validation_error');
  const cancelled = await call(owner, 'cancel_job', { job_id: secondId });
  expect(cancelled.isError).toBeFalsy();
  expect(['cancelled', 'completed']).toContain(cancelled.structuredContent.job.status);

  // Every answer, success or error: text and structured content each within the bound.
  expect(new Set(results.map((r) => r.name))).toEqual(
    new Set(['list_operations', 'quote', 'extract', 'start_job', 'get_job', 'get_items', 'cancel_job', 'get_usage']),
  );
  for (const { name, result } of results) {
    const text = result.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
    expect({ name, over: Buffer.byteLength(text) > BOUND || Buffer.byteLength(JSON.stringify(result.structuredContent)) > BOUND }).toEqual({
      name,
      over: false,
    });
  }
}, 120_000);

it('get_series and list_changes stay within the bound: older points left out (truncated), changes cut at a whole one (has_more), none lost', async () => {
  const owner = await connect(ownerKey);
  const made = await call(owner, 'create_monitor', { operation: 'profile', targets: ['bound_a', 'bound_b'], frequency: 'weekly' });
  expect(made.isError).toBeFalsy();
  const monitorId = made.structuredContent.monitor.id as string;
  // Many points and changes, as a year of hourly runs would leave them.
  const db = createDb({ connectionString: database.url, max: 1 });
  try {
    const { workspace_id: workspaceId } = await db
      .selectFrom('monitors')
      .select('workspace_id')
      .where('id', '=', monitorId)
      .executeTakeFirstOrThrow();
    const start = Date.parse('2026-11-01T00:00:00.000Z');
    await ensureMonthPartition(db, new Date(start));
    const points = Array.from({ length: 400 }, (_, i) => ({
      monitor_id: monitorId,
      workspace_id: workspaceId,
      target: i % 2 ? 'bound_a' : 'bound_b',
      item_id: '',
      metric: 'followers_count',
      at: new Date(start + i * 3_600_000),
      value: 1000 + i,
      run_id: `mrn_bound${i}`,
    }));
    await db.insertInto('monitor_points').values(points).execute();
    await db
      .insertInto('monitor_changes')
      .values(
        points.map((p, i) => ({
          id: `mch_bound${String(i).padStart(4, '0')}`,
          monitor_id: monitorId,
          workspace_id: workspaceId,
          run_id: p.run_id,
          target: p.target,
          item_id: null,
          kind: 'metric_changed' as const,
          field: p.metric,
          before: String(p.value - 1),
          after: String(p.value),
          change_pct: 0.1,
          at: p.at,
        })),
      )
      .execute();
  } finally {
    await db.destroy();
  }

  const series = await call(owner, 'get_series', { monitor_id: monitorId });
  expect(series.isError).toBeFalsy();
  expect(series.structuredContent.truncated).toBe(true);
  const kept = series.structuredContent.series as Array<{ target: string; points: Array<{ at: string; value: number }> }>;
  expect(kept.map((s) => s.target)).toEqual(['bound_a', 'bound_b']);
  // Each series keeps its newest points, in order.
  expect(kept.find((s) => s.target === 'bound_a')!.points.at(-1)!.value).toBe(1399);
  expect(kept.find((s) => s.target === 'bound_b')!.points.at(-1)!.value).toBe(1398);
  for (const s of kept) expect(s.points.map((p) => p.value)).toEqual([...s.points.map((p) => p.value)].sort((a, b) => a - b));

  const seen: string[] = [];
  let after: string | undefined;
  let pages = 0;
  for (;;) {
    const page: Result = await call(owner, 'list_changes', {
      monitor_id: monitorId,
      limit: 100,
      ...(after ? { starting_after: after } : {}),
    });
    pages += 1;
    expect(page.isError).toBeFalsy();
    const ids = (page.structuredContent.changes as Array<{ id: string }>).map((c) => c.id);
    expect(ids.length).toBeGreaterThan(0);
    seen.push(...ids);
    if (!page.structuredContent.has_more) break;
    after = ids.at(-1);
  }
  expect(pages).toBeGreaterThan(4);
  expect(seen).toEqual(Array.from({ length: 400 }, (_, i) => `mch_bound${String(399 - i).padStart(4, '0')}`));

  for (const { name, result } of results.filter((r) => r.name === 'get_series' || r.name === 'list_changes')) {
    const text = result.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
    expect({ name, over: Buffer.byteLength(text) > BOUND || Buffer.byteLength(JSON.stringify(result.structuredContent)) > BOUND }).toEqual({
      name,
      over: false,
    });
  }
}, 60_000);
