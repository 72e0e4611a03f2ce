import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { eventually, type SeededWorkspace, type ServedStack, startServedStack, type LooseJson } from '@sdx/testing';

/**
 * Long work through MCP (extensions-2.md 3): with the sandbox slowed to 600 ms a page and
 * SYNC_TIMEOUT_MS at 1 s, `extract` reports progress while it waits, answers a job that ends in
 * time with its items, and one that does not with the job to follow (completed: false), which
 * get_job then follows to its end; `start_job` answers at once, whatever the job's length.
 */

let served: ServedStack;
let ws: SeededWorkspace;
let client: Client;

type Result = CallToolResult & { structuredContent: Record<string, LooseJson> };

beforeAll(async () => {
  served = await startServedStack({ withWorker: true, env: { SANDBOX_LATENCY_MS: '600', SYNC_TIMEOUT_MS: '1000' } });
  ws = await served.stack.workspace({ credits: 100_000, rateLimitPerMinute: 100_000 });
  client = new Client({ name: 'mcp-progress-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`), { requestInit: { headers: { 'X-API-Key': ws.apiKey } } }),
  );
}, 60_000);
afterAll(async () => {
  await client.close();
  await served.close();
});

async function withProgress(name: string, args: Record<string, unknown>): Promise<{ result: Result; seen: Progress[]; ms: number }> {
  const seen: Progress[] = [];
  const started = Date.now();
  const result = (await client.callTool({ name, arguments: args }, undefined, { onprogress: (progress) => seen.push(progress) })) as Result;
  return { result, seen, ms: Date.now() - started };
}

it('extract reports the job while it waits, then answers its items', async () => {
  const { result, seen } = await withProgress('extract', { platform: 'facebook', operation: 'posts', target: 'progress_fast', limit: 100 });
  expect(result.structuredContent).toMatchObject({ completed: true, job: { status: 'completed' } });
  expect(result.structuredContent.items).toHaveLength(100);
  // The job's states as it went: queued or running first, completed last; progress never goes back.
  expect(seen.length).toBeGreaterThanOrEqual(2);
  expect(seen[0].message).toMatch(/queued|running/);
  expect(seen[seen.length - 1]).toMatchObject({ progress: 100, total: 100, message: expect.stringMatching(/completed/) });
  const values = seen.map((p) => p.progress);
  for (let i = 1; i < values.length; i += 1) expect(values[i]).toBeGreaterThan(values[i - 1]);
});

it('extract answers the running job after SYNC_TIMEOUT_MS, to follow with get_job and read with get_items', async () => {
  const { result, seen, ms } = await withProgress('extract', {
    platform: 'facebook',
    operation: 'posts',
    target: 'progress_slow',
    limit: 200,
  });
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent).toMatchObject({
    completed: false,
    items: [],
    next_cursor: null,
    job: { status: expect.stringMatching(/queued|running/) },
  });
  expect(ms).toBeGreaterThanOrEqual(1000);
  expect(ms).toBeLessThan(5000);
  expect(seen.length).toBeGreaterThanOrEqual(1);
  const id = result.structuredContent.job.id as string;
  const done = await eventually(
    async () => {
      const job = ((await client.callTool({ name: 'get_job', arguments: { job_id: id } })) as Result).structuredContent.job;
      return job.status === 'completed' ? job : undefined;
    },
    20_000,
    100,
  );
  expect(done.result_count).toBe(200);
  const page = (await client.callTool({ name: 'get_items', arguments: { job_id: id } })) as Result;
  expect(page.structuredContent.items).toHaveLength(100);
  const rest = (await client.callTool({
    name: 'get_items',
    arguments: { job_id: id, cursor: page.structuredContent.next_cursor },
  })) as Result;
  expect(rest.structuredContent).toMatchObject({ next_cursor: null, truncated: false });
  expect(rest.structuredContent.items).toHaveLength(100);
});

it('start_job answers at once with one progress notification, long as the job is', async () => {
  const { result, seen, ms } = await withProgress('start_job', {
    platform: 'facebook',
    operation: 'posts',
    target: 'progress_start',
    limit: 200,
  });
  expect(result.structuredContent.job.status).toMatch(/queued|running/);
  expect(ms).toBeLessThan(1000);
  expect(seen).toEqual([
    expect.objectContaining({ progress: 0, total: 200, message: expect.stringContaining(result.structuredContent.job.id) }),
  ]);
  const followed = (await client.callTool({ name: 'get_items', arguments: { job_id: result.structuredContent.job.id } })) as Result;
  expect(followed).toMatchObject({ isError: true, structuredContent: { error: 'results_not_ready' } });
});
