import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { type SeededWorkspace, type ServedStack, startServedStack } from '@sdx/testing';
import { BIN, ROOT, sdx } from './support';

/** `sdx mcp`: the API's MCP tools over stdio, through the SDK's StdioClientTransport, with the key `sdx login` stored. */

let served: ServedStack;
let ws: SeededWorkspace;
let home: string;
let client: Client;

beforeAll(async () => {
  served = await startServedStack({ withWorker: true });
  ws = await served.stack.workspace({ credits: 100_000 });
  home = mkdtempSync(path.join(tmpdir(), 'sdx-mcp-'));
  // The key and URL as `sdx login` stores them: the server finds them without SDX_API_KEY.
  mkdirSync(path.join(home, 'sdx'), { recursive: true, mode: 0o700 });
  writeFileSync(path.join(home, 'sdx', 'config.json'), JSON.stringify({ api_key: ws.apiKey, base_url: served.url }), { mode: 0o600 });
  client = new Client({ name: 'desktop-agent', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp'],
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', XDG_CONFIG_HOME: home },
      stderr: 'pipe',
    }),
  );
}, 60_000);
afterAll(async () => {
  await client?.close();
  await served.close();
  rmSync(home, { recursive: true, force: true });
});

it("lists the API's eleven tools", async () => {
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
  expect(tools.find((t) => t.name === 'get_items')!.annotations).toMatchObject({ readOnlyHint: true });
});

it('calls tools on the API with the stored key, progress notifications passed on, errors as tool results', async () => {
  const seen: Progress[] = [];
  const result = (await client.callTool(
    { name: 'extract', arguments: { platform: 'twitter', operation: 'followers', target: 'stdio_mcp', limit: 5 } },
    undefined,
    {
      onprogress: (progress) => seen.push(progress),
    },
  )) as CallToolResult & { structuredContent: { job: { id: string; status: string }; items: unknown[] } };
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent.job.status).toBe('completed');
  expect(result.structuredContent.items).toHaveLength(5);
  expect(seen.length).toBeGreaterThanOrEqual(1);
  const job = await served.stack.runtime.db
    .selectFrom('jobs')
    .select('workspace_id')
    .where('id', '=', result.structuredContent.job.id)
    .executeTakeFirstOrThrow();
  expect(job.workspace_id).toBe(ws.workspaceId);
  const missing = (await client.callTool({ name: 'get_job', arguments: { job_id: 'job_nope' } })) as CallToolResult & {
    structuredContent: { error: string };
  };
  expect(missing).toMatchObject({ isError: true, structuredContent: { error: 'job_not_found' } });
});

it('refuses to start without a key, and reports an API it cannot reach', async () => {
  const empty = mkdtempSync(path.join(tmpdir(), 'sdx-mcp-none-'));
  try {
    const noKey = await sdx(['mcp'], { env: { XDG_CONFIG_HOME: empty } });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/no API key/);
    const badKey = await sdx(['mcp'], { env: { XDG_CONFIG_HOME: empty, SDX_API_KEY: 'sdx_nope', SDX_BASE_URL: served.url } });
    expect(badKey.code).toBe(4);
    expect(badKey.stderr).toMatch(/cannot open the MCP server/);
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
});
