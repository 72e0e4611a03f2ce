import http from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { createApiKey, dispatchMonitors } from '@sdx/domain/testing';
import { eventually, type SeededWorkspace, type ServedStack, startServedStack, type LooseJson } from '@sdx/testing';

/**
 * The MCP server (extensions-2.md 3) through the SDK's own client over Streamable HTTP: every
 * tool's success, bad input, the viewer's refusal where the REST route refuses it, a workspace
 * without credits, progress notifications, and the 401 that sends an agent to sign in.
 */

let served: ServedStack;
let ws: SeededWorkspace;
let broke: SeededWorkspace;
let viewerKey: string;
const clients: Client[] = [];

async function connect(key: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${key}`, ...headers } },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

async function call(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<CallToolResult & { structuredContent: Record<string, LooseJson> }> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult & { structuredContent: Record<string, LooseJson> };
}

function textOf(result: CallToolResult): string {
  const block = result.content[0];
  return block?.type === 'text' ? block.text : '';
}

beforeAll(async () => {
  served = await startServedStack({ withWorker: true });
  ws = await served.stack.workspace({ credits: 100_000, rateLimitPerMinute: 100_000 });
  broke = await served.stack.workspace({ credits: 0, rateLimitPerMinute: 100_000 });
  viewerKey = (await createApiKey(served.stack.runtime.db, ws.workspaceId, 'viewer', { role: 'viewer' })).api_key;
}, 60_000);
afterAll(async () => {
  for (const client of clients) await client.close();
  await served.close();
});

describe('tools/list', () => {
  it('lists the eleven tools with input and output schemas and annotations', async () => {
    const client = await connect(ws.apiKey);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      'list_operations',
      'quote',
      'extract',
      'start_job',
      'get_job',
      'get_items',
      'cancel_job',
      'get_usage',
      'create_monitor',
      'get_series',
      'list_changes',
    ]);
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
      expect(typeof tool.annotations?.readOnlyHint).toBe('boolean');
      expect(typeof tool.annotations?.destructiveHint).toBe('boolean');
      expect(typeof tool.annotations?.idempotentHint).toBe('boolean');
    }
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get('get_job')!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true });
    expect(byName.get('cancel_job')!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(byName.get('start_job')!.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: false });
    expect(byName.get('get_items')!.description).toMatch(/next_cursor/);
    expect(client.getServerVersion()?.name).toBe('sdx');
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/Unknown tool/);
  });

  it('says every schema portably: no list of types, no bare additionalProperties (MCP Inspector --strict)', async () => {
    const client = await connect(ws.apiKey);
    const { tools } = await client.listTools();
    const found: string[] = [];
    let nullable = 0;
    const walk = (node: unknown, at: string): void => {
      if (Array.isArray(node)) return node.forEach((sub, i) => walk(sub, `${at}[${i}]`));
      if (!node || typeof node !== 'object') return;
      const o = node as Record<string, unknown>;
      if (Array.isArray(o.type)) found.push(`${at}: type ${JSON.stringify(o.type)}`);
      if (o.type === 'null') nullable += 1;
      if ('additionalProperties' in o) {
        const extra = o.additionalProperties;
        if (extra === true || (typeof extra === 'object' && extra !== null && Object.keys(extra).length === 0))
          found.push(`${at}: additionalProperties ${JSON.stringify(extra)}`);
      }
      for (const [key, value] of Object.entries(o)) walk(value, `${at}.${key}`);
    };
    for (const tool of tools) {
      walk(tool.inputSchema, `${tool.name}.inputSchema`);
      walk(tool.outputSchema, `${tool.name}.outputSchema`);
    }
    expect(found).toEqual([]);
    // Nullable fields are still said to be nullable (anyOf with {type: 'null'}), not dropped.
    expect(nullable).toBeGreaterThan(10);
    const getJob = tools.find((t) => t.name === 'get_job')!.outputSchema as unknown as {
      anyOf: Array<{ properties?: Record<string, { properties?: Record<string, unknown> }> }>;
    };
    // The contract's JobResponse.finished_at (nullable in openapi.yaml) as a portable JSON Schema.
    expect(getJob.anyOf[0].properties!.job.properties!.finished_at).toEqual({
      description: 'When it reached a terminal state.',
      anyOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }],
    });
  });
});

describe('every tool', () => {
  let client: Client;
  let viewer: Client;
  let poor: Client;
  let jobId: string;
  beforeAll(async () => {
    client = await connect(ws.apiKey);
    viewer = await connect(viewerKey);
    poor = await connect(broke.apiKey);
  });

  it('list_operations: the catalog with target kinds, limits and prices; one platform; bad input', async () => {
    // A default limit of 25, then the cursor goes on; `limit` asks for more (at most 100).
    const first = await call(client, 'list_operations');
    expect(first.isError).toBeFalsy();
    expect(first.structuredContent).toMatchObject({ truncated: true, next_cursor: '25' });
    expect(first.structuredContent.operations).toHaveLength(25);
    const second = await call(client, 'list_operations', { cursor: '25' });
    expect((second.structuredContent.operations as unknown[]).length).toBeGreaterThan(0);
    expect(await call(client, 'list_operations', { limit: 101 })).toMatchObject({
      isError: true,
      structuredContent: { error: 'validation_error' },
    });
    const all = await call(client, 'list_operations', { limit: 100 });
    expect(all.isError).toBeFalsy();
    const ops = all.structuredContent.operations as Array<Record<string, unknown>>;
    expect(ops.length).toBeGreaterThan(25);
    expect(ops.slice(0, 25)).toEqual(first.structuredContent.operations);
    expect(ops).toContainEqual(
      expect.objectContaining({
        platform: 'twitter',
        operation: 'followers',
        target_kind: expect.any(String),
        max_limit: expect.any(Number),
        credits_per_result: expect.any(Number),
      }),
    );
    expect(all.structuredContent.truncated).toBe(false);
    const one = await call(viewer, 'list_operations', { platform: 'twitter' });
    expect(new Set((one.structuredContent.operations as Array<{ platform: string }>).map((o) => o.platform))).toEqual(new Set(['twitter']));
    const bad = await call(client, 'list_operations', { platform: 7 });
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent).toMatchObject({
      error: 'validation_error',
      detail: [expect.objectContaining({ loc: ['arguments', 'platform'] })],
    });
  });

  it('quote: priced as POST /v1/quotes; a viewer is refused; a workspace without credits is told what blocks it', async () => {
    const priced = await call(client, 'quote', { platform: 'twitter', operation: 'followers', target: 'nasa', limit: 40 });
    expect(priced.isError).toBeFalsy();
    const rest = await served.stack.api.post('/v1/quotes', {
      headers: ws.auth,
      body: { platform: 'twitter', operation: 'followers', target: 'nasa', limit: 40 },
    });
    expect(priced.structuredContent).toEqual(rest.body);
    expect(priced.structuredContent).toMatchObject({ affordable: true, blocked_by: null });
    // The summary in words: a singular target, thousands with separators.
    const large = await call(client, 'quote', { platform: 'twitter', operation: 'followers', target: 'nasa', limit: 25_000 });
    const summary = JSON.stringify(large.content);
    expect(summary).toMatch(/At most \d{1,3}(,\d{3})+ credits for 1 target of twitter followers; [\d,]+ available/);
    expect(summary).not.toContain('target(s)');
    const refused = await call(viewer, 'quote', { platform: 'twitter', operation: 'followers', target: 'nasa' });
    expect(refused).toMatchObject({ isError: true, structuredContent: { error: 'forbidden', required_role: 'member' } });
    const poorQuote = await call(poor, 'quote', { platform: 'twitter', operation: 'followers', target: 'nasa', limit: 40 });
    expect(poorQuote.structuredContent).toMatchObject({ affordable: false, blocked_by: 'insufficient_credits' });
    const both = await call(client, 'quote', { platform: 'twitter', operation: 'followers', target: 'a', targets: ['b'] });
    expect(both).toMatchObject({ isError: true, structuredContent: { error: 'validation_error' } });
    const unknown = await call(client, 'quote', { platform: 'twitter', operation: 'no_such_operation', target: 'nasa' });
    expect(unknown).toMatchObject({ isError: true, structuredContent: { error: 'unsupported_operation' } });
  });

  it('start_job: answers at once with the job, billed as POST /v1/jobs; viewer refused; no credits is insufficient_credits', async () => {
    const started = await call(client, 'start_job', {
      platform: 'twitter',
      operation: 'followers',
      target: 'mcp_start',
      limit: 30,
      idempotency_key: 'mcp-start-1',
    });
    expect(started.isError).toBeFalsy();
    const job = started.structuredContent.job as Record<string, LooseJson>;
    jobId = job.id;
    expect(job).toMatchObject({
      platform: 'twitter',
      operation: 'followers',
      target: 'mcp_start',
      status: expect.stringMatching(/queued|running|completed/),
    });
    expect(job).not.toHaveProperty('result');
    expect(textOf(started)).toContain(jobId);
    const row = await served.stack.runtime.db
      .selectFrom('jobs')
      .select(['workspace_id', 'request_id'])
      .where('id', '=', jobId)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ workspace_id: ws.workspaceId, request_id: expect.any(String) });
    // Billed to the key as the REST call is: its month's spend (what its spend cap compares) counts the reservation.
    const spend = await served.stack.runtime.db
      .selectFrom('api_key_spend')
      .select('spent')
      .where('key_id', '=', ws.keyId)
      .executeTakeFirstOrThrow();
    expect(spend.spent).toBeGreaterThan(0);
    const replay = await call(client, 'start_job', {
      platform: 'twitter',
      operation: 'followers',
      target: 'mcp_start',
      limit: 30,
      idempotency_key: 'mcp-start-1',
    });
    expect(replay.structuredContent.job).toMatchObject({ id: jobId, idempotent_replay: true });
    const refused = await call(viewer, 'start_job', { platform: 'twitter', operation: 'followers', target: 'mcp_viewer' });
    expect(refused).toMatchObject({ isError: true, structuredContent: { error: 'forbidden', required_role: 'member' } });
    const poorStart = await call(poor, 'start_job', { platform: 'twitter', operation: 'followers', target: 'mcp_poor', limit: 40 });
    expect(poorStart).toMatchObject({ isError: true, structuredContent: { error: 'insufficient_credits' } });
    expect(textOf(poorStart)).toMatch(/insufficient_credits/);
    const bad = await call(client, 'start_job', { platform: 'twitter', operation: 'followers', target: 'x', limit: 'ten' });
    expect(bad).toMatchObject({ isError: true, structuredContent: { error: 'validation_error' } });
    const extra = await call(client, 'start_job', { platform: 'twitter', operation: 'followers', target: 'x', colour: 'red' });
    expect(extra).toMatchObject({ isError: true, structuredContent: { error: 'validation_error' } });
  });

  it("get_job: the job without result, as GET /v1/jobs/{id}; another workspace's job is job_not_found", async () => {
    const done = await eventually(
      async () => {
        const result = await call(viewer, 'get_job', { job_id: jobId });
        return result.structuredContent.job.status === 'completed' ? result : undefined;
      },
      30_000,
      50,
    );
    const rest = await served.stack.api.get(`/v1/jobs/${jobId}`, { headers: ws.auth });
    const { result: _result, ...expected } = rest.body as Record<string, unknown>;
    expect(done.structuredContent.job).toEqual(expected);
    const foreign = await call(poor, 'get_job', { job_id: jobId });
    expect(foreign).toMatchObject({ isError: true, structuredContent: { error: 'job_not_found' } });
    const bad = await call(client, 'get_job', {});
    expect(bad).toMatchObject({
      isError: true,
      structuredContent: { error: 'validation_error', detail: [expect.objectContaining({ loc: ['arguments', 'job_id'] })] },
    });
  });

  it('get_items: pages of the result with next_cursor; a viewer may read; bad cursor and limit refused', async () => {
    const first = await call(viewer, 'get_items', { job_id: jobId, limit: 20 });
    expect(first.isError).toBeFalsy();
    expect(first.structuredContent.items).toHaveLength(20);
    expect(first.structuredContent.truncated).toBe(false);
    const second = await call(viewer, 'get_items', { job_id: jobId, cursor: first.structuredContent.next_cursor });
    expect(second.structuredContent.items).toHaveLength(10);
    expect(second.structuredContent.next_cursor).toBeNull();
    const rest = await served.stack.api.get(`/v1/jobs/${jobId}/items`, { headers: ws.auth, query: { limit: 100 } });
    expect([...first.structuredContent.items, ...second.structuredContent.items]).toEqual(rest.body.items);
    expect(await call(client, 'get_items', { job_id: jobId, limit: 101 })).toMatchObject({
      isError: true,
      structuredContent: { error: 'validation_error' },
    });
    expect(await call(client, 'get_items', { job_id: jobId, cursor: 'not-a-cursor' })).toMatchObject({
      isError: true,
      structuredContent: { error: 'validation_error' },
    });
    expect(await call(poor, 'get_items', { job_id: jobId })).toMatchObject({
      isError: true,
      structuredContent: { error: 'job_not_found' },
    });
  });

  it('cancel_job: as POST /v1/jobs/{id}/cancel, reservation released; viewer refused; unknown job', async () => {
    const slow = await call(client, 'start_job', { platform: 'twitter', operation: 'followers', target: 'mcp_cancel_slow', limit: 25_000 });
    const id = slow.structuredContent.job.id as string;
    const refused = await call(viewer, 'cancel_job', { job_id: id });
    expect(refused).toMatchObject({ isError: true, structuredContent: { error: 'forbidden', required_role: 'member' } });
    const cancelled = await call(client, 'cancel_job', { job_id: id });
    expect(cancelled.isError).toBeFalsy();
    expect(['cancelled', 'completed']).toContain(cancelled.structuredContent.job.status);
    expect(cancelled.structuredContent.job.reserved_credits).toBe(0);
    const again = await call(client, 'cancel_job', { job_id: id });
    expect(again.structuredContent.job.status).toBe(cancelled.structuredContent.job.status);
    expect(await call(client, 'cancel_job', { job_id: 'job_nope' })).toMatchObject({
      isError: true,
      structuredContent: { error: 'job_not_found' },
    });
    expect(await call(client, 'cancel_job', { job_id: '' })).toMatchObject({
      isError: true,
      structuredContent: { error: 'validation_error' },
    });
  });

  it('get_usage: as GET /v1/usage/current, for a viewer too and for a workspace without credits', async () => {
    const usage = await call(viewer, 'get_usage');
    expect(usage.isError).toBeFalsy();
    const rest = await served.stack.api.get('/v1/usage/current', { headers: ws.auth });
    expect(usage.structuredContent).toEqual(rest.body);
    const poorUsage = await call(poor, 'get_usage');
    expect(poorUsage.structuredContent.credits_remaining).toBe(0);
    expect(await call(client, 'get_usage', { extra: 1 })).toMatchObject({
      isError: true,
      structuredContent: { error: 'validation_error' },
    });
  });

  it('extract: waits and answers the job with its first items; viewer refused; no credits; over the sync limit', async () => {
    const result = await call(client, 'extract', { platform: 'twitter', operation: 'followers', target: 'mcp_extract', limit: 12 });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      completed: true,
      truncated: false,
      next_cursor: null,
      job: { status: 'completed', result_count: 12 },
    });
    expect(result.structuredContent.items).toHaveLength(12);
    expect(await call(viewer, 'extract', { platform: 'twitter', operation: 'followers', target: 'mcp_x' })).toMatchObject({
      isError: true,
      structuredContent: { error: 'forbidden' },
    });
    expect(await call(poor, 'extract', { platform: 'twitter', operation: 'followers', target: 'mcp_x', limit: 40 })).toMatchObject({
      isError: true,
      structuredContent: { error: 'insufficient_credits' },
    });
    expect(await call(client, 'extract', { platform: 'twitter', operation: 'followers', target: 'mcp_x', limit: 5000 })).toMatchObject({
      isError: true,
      structuredContent: { error: 'invalid_request', max_sync_limit: 200 },
    });
    expect(await call(client, 'extract', { platform: 'twitter' })).toMatchObject({
      isError: true,
      structuredContent: { error: 'validation_error' },
    });
  });
});

describe('monitors', () => {
  it('create_monitor as POST /v1/monitors (viewer refused); get_series and list_changes answer as their REST reads, for a viewer too', async () => {
    const client = await connect(ws.apiKey);
    const viewer = await connect(viewerKey);
    const refused = await call(viewer, 'create_monitor', { operation: 'profile', targets: ['nasa'], frequency: 'daily' });
    expect(refused).toMatchObject({ isError: true, structuredContent: { error: 'forbidden', required_role: 'member' } });
    const bad = await call(client, 'create_monitor', { operation: 'followers', targets: ['nasa'], frequency: 'daily' });
    expect(bad).toMatchObject({ isError: true, structuredContent: { error: 'operation_not_monitorable' } });
    const drifting = 'mcp_sandbox_drift_25';
    const made = await call(client, 'create_monitor', {
      operation: 'profile',
      targets: [drifting],
      frequency: 'daily',
      alerts: [{ metric: 'followers_count', condition: 'above', threshold: 1 }],
    });
    expect(made.isError).toBeFalsy();
    const monitor = made.structuredContent.monitor as { id: string; status: string };
    const rest = await served.stack.api.get(`/v1/monitors/${monitor.id}`, { headers: ws.auth });
    expect(made.structuredContent.monitor).toEqual(rest.body);
    expect(monitor.status).toBe('active');

    for (const pause of [0, 1100]) {
      await new Promise((resolve) => setTimeout(resolve, pause));
      const started = await served.stack.api.post(`/v1/monitors/${monitor.id}/run`, { headers: ws.auth });
      expect(started.status).toBe(202);
      await eventually(async () => {
        await dispatchMonitors(served.stack.runtime.services);
        const runs = await served.stack.api.get(`/v1/monitors/${monitor.id}/runs`, { headers: ws.auth });
        return (runs.body.data as Array<{ id: string; status: string }>).find((r) => r.id === started.body.id)?.status === 'completed';
      }, 30_000);
    }

    const series = await call(viewer, 'get_series', { monitor_id: monitor.id, metric: 'followers_count' });
    expect(series.isError).toBeFalsy();
    const restSeries = await served.stack.api.get(`/v1/monitors/${monitor.id}/series?metric=followers_count`, { headers: ws.auth });
    expect(series.structuredContent).toEqual({ series: restSeries.body.data, truncated: false });
    expect(series.structuredContent.series[0].points).toHaveLength(2);

    const changes = await call(viewer, 'list_changes', { monitor_id: monitor.id, kind: 'metric_changed', limit: 2 });
    const restChanges = await served.stack.api.get(`/v1/monitors/${monitor.id}/changes?kind=metric_changed&limit=2`, { headers: ws.auth });
    expect(changes.structuredContent).toEqual({ changes: restChanges.body.data, has_more: true });
    const rest2 = await call(viewer, 'list_changes', {
      monitor_id: monitor.id,
      kind: 'metric_changed',
      starting_after: changes.structuredContent.changes[1].id,
    });
    expect(rest2.structuredContent.changes).toHaveLength(1);
    expect(rest2.structuredContent.has_more).toBe(false);

    const other = await served.stack.workspace({ rateLimitPerMinute: 100_000 });
    const stranger = await connect(other.apiKey);
    expect(await call(stranger, 'get_series', { monitor_id: monitor.id })).toMatchObject({
      isError: true,
      structuredContent: { error: 'monitor_not_found' },
    });
    expect(await call(stranger, 'list_changes', { monitor_id: monitor.id })).toMatchObject({
      isError: true,
      structuredContent: { error: 'monitor_not_found' },
    });
    expect(await call(client, 'list_changes', { monitor_id: monitor.id, kind: 'everything' })).toMatchObject({
      isError: true,
      structuredContent: { error: 'validation_error' },
    });
  });
});

describe('paging', () => {
  it('pages through a 25,000-item job with get_items, losing and repeating nothing', async () => {
    const big = await served.stack.workspace({ credits: 60_000, rateLimitPerMinute: 1_000_000 });
    const client = await connect(big.apiKey);
    const started = await call(client, 'start_job', { platform: 'twitter', operation: 'followers', target: 'mcp_big', limit: 25_000 });
    const id = started.structuredContent.job.id as string;
    await eventually(
      async () => ((await call(client, 'get_job', { job_id: id })).structuredContent.job.status === 'completed' ? true : undefined),
      90_000,
      200,
    );
    const pages = await served.stack.runtime.db
      .selectFrom('job_result_pages')
      .select('items')
      .where('job_id', '=', id)
      .orderBy('page_no')
      .execute();
    const stored = pages.flatMap((p) => (p.items as Array<{ id: string }>).map((i) => i.id));
    expect(stored).toHaveLength(25_000);
    const ids: string[] = [];
    let cursor: string | null = null;
    let calls = 0;
    do {
      const page: Awaited<ReturnType<typeof call>> = await call(client, 'get_items', {
        job_id: id,
        limit: 100,
        ...(cursor ? { cursor } : {}),
      });
      expect(page.isError).toBeFalsy();
      ids.push(...(page.structuredContent.items as Array<{ id: string }>).map((i) => i.id));
      cursor = page.structuredContent.next_cursor as string | null;
      calls += 1;
      if (calls > 1000) throw new Error('paging does not end');
    } while (cursor !== null);
    expect(ids).toEqual(stored);
    expect(new Set(ids).size).toBe(25_000);
  }, 180_000);
});

describe('concurrency', () => {
  it('answers concurrent calls of two workspaces each with its own tenant (a server per request)', async () => {
    // Another allowance than `ws`'s, so that an answer for the wrong workspace cannot pass.
    const other = await served.stack.workspace({ credits: 7_000, rateLimitPerMinute: 100_000 });
    const [mine, theirs] = [await connect(ws.apiKey), await connect(other.apiKey)];
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        i % 2 === 0
          ? call(mine, 'get_usage').then((r) => ['mine', r] as const)
          : call(theirs, 'get_usage').then((r) => ['theirs', r] as const),
      ),
    );
    const mineUsage = (await served.stack.api.get('/v1/usage/current', { headers: ws.auth })).body;
    const theirUsage = (await served.stack.api.get('/v1/usage/current', { headers: other.auth })).body;
    expect(theirUsage.credit_limit).toBe(7_000);
    for (const [who, result] of answers) expect(result.structuredContent).toEqual(who === 'mine' ? mineUsage : theirUsage);
  });
});

describe('progress', () => {
  it('extract and start_job send notifications/progress when the call carries a progressToken', async () => {
    const client = await connect(ws.apiKey);
    const seen: Progress[] = [];
    const result = await client.callTool(
      { name: 'extract', arguments: { platform: 'twitter', operation: 'followers', target: 'mcp_progress', limit: 150 } },
      undefined,
      {
        onprogress: (progress) => seen.push(progress),
      },
    );
    expect(result.isError).toBeFalsy();
    expect(seen.length).toBeGreaterThanOrEqual(1);
    const values = seen.map((p) => p.progress);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(seen[seen.length - 1].message).toMatch(/completed/);
    const started: Progress[] = [];
    const job = await client.callTool(
      { name: 'start_job', arguments: { platform: 'twitter', operation: 'followers', target: 'mcp_progress_start', limit: 10 } },
      undefined,
      {
        onprogress: (progress) => started.push(progress),
      },
    );
    expect(started).toHaveLength(1);
    expect(started[0].message).toContain((job.structuredContent as { job: { id: string } }).job.id);
  });
});

describe('authentication', () => {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

  it('401 with WWW-Authenticate naming the protected-resource metadata, without a key and with a bad one', async () => {
    const appUrl = served.stack.runtime.config.appUrl;
    for (const extra of [{}, { Authorization: 'Bearer sdx_nope' }, { 'X-API-Key': 'sdx_nope' }] as Array<Record<string, string>>) {
      const res = await fetch(`${served.url}/mcp`, { method: 'POST', headers: { ...headers, ...extra }, body });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${appUrl}/.well-known/oauth-protected-resource"`);
      expect(((await res.json()) as { detail: { error: string } }).detail.error).toMatch(/missing_authentication|invalid_api_key/);
    }
  });

  it("counts every message against the workspace's rate limit, as any request (429 with Retry-After)", async () => {
    const limited = await served.stack.workspace({ credits: 1000, rateLimitPerMinute: 2 });
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 3; i += 1) {
      const res = await fetch(`${served.url}/mcp`, { method: 'POST', headers: { ...headers, 'X-API-Key': limited.apiKey }, body });
      statuses.push(res.status);
      if (res.status === 429) retryAfter = res.headers.get('retry-after');
      await res.arrayBuffer();
    }
    expect(statuses).toEqual([200, 200, 429]);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  });

  it('a session cookie is not a credential on /mcp', async () => {
    const res = await fetch(`${served.url}/mcp`, { method: 'POST', headers: { ...headers, Cookie: 'sdx_session=whatever' }, body });
    expect(res.status).toBe(401);
  });

  it('refuses a foreign Host or Origin (DNS rebinding), and GET and DELETE with 405', async () => {
    const auth = { Authorization: `Bearer ${ws.apiKey}` };
    const hostStatus = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${served.url}/mcp`, { method: 'POST', headers: { ...headers, ...auth, Host: 'evil.example' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end(body);
    });
    expect(hostStatus).toBe(403);
    const origin = await fetch(`${served.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, ...auth, Origin: 'https://evil.example' },
      body,
    });
    expect(origin.status).toBe(403);
    const get = await fetch(`${served.url}/mcp`, { headers: { ...auth, Accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    const del = await fetch(`${served.url}/mcp`, { method: 'DELETE', headers: auth });
    expect(del.status).toBe(405);
  });
});
