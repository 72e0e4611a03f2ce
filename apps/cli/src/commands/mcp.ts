import type { Command } from 'commander';
import { action } from '../args';
import { settings } from '../config';
import { type Context, VERSION } from '../context';
import { CliError, EXIT, UsageError } from '../exit-codes';

/** How long one tool call may take end to end; progress notifications restart the count. */
const CALL_TIMEOUT_MS = 10 * 60_000;

export function registerMcp(program: Command): void {
  program
    .command('mcp')
    .description(
      'serve the MCP tools over stdio for desktop agents (Claude Desktop, Cursor, VS Code, ...), calling {base URL}/mcp with the stored key',
    )
    .action(action(async (ctx) => serveMcp(ctx)));
}

/**
 * `sdx mcp`: an MCP server on stdin/stdout that forwards to the API's own MCP server
 * (`{base URL}/mcp`, Streamable HTTP) with the key of SDX_API_KEY or `sdx login`. The tools, their
 * schemas, the output bound, roles and billing are the API's: tools/list and tools/call are
 * passed on as they are, and the API's progress notifications come back as notifications of the
 * stdio call. Nothing but protocol messages is written to stdout; a failure to reach the API at
 * start is reported on stderr with the CLI's exit codes. The MCP SDK is loaded only here, so the
 * other commands do not pay for it.
 */
async function serveMcp(ctx: Context): Promise<void> {
  const current = settings(ctx.env);
  if (!current.apiKey) throw new UsageError('no API key: run `sdx login`, or set SDX_API_KEY');
  const [{ Client }, { StreamableHTTPClientTransport }, { Server }, { StdioServerTransport }, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/stdio.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);

  const upstream = new Client({ name: 'sdx-cli', version: VERSION });
  const url = new URL('mcp', current.baseUrl.endsWith('/') ? current.baseUrl : `${current.baseUrl}/`);
  const headers = { Authorization: `Bearer ${current.apiKey}`, 'User-Agent': `sdx-cli/${VERSION} node/${process.version}` };
  try {
    await upstream.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  } catch (error) {
    throw new CliError(
      `cannot open the MCP server at ${url.href}: ${error instanceof Error ? error.message : String(error)}`,
      EXIT.connection,
    );
  }

  const info = upstream.getServerVersion();
  const server = new Server(
    { name: info?.name ?? 'sdx', version: info?.version ?? VERSION },
    { capabilities: { tools: { listChanged: false } }, instructions: upstream.getInstructions() },
  );
  server.setRequestHandler(types.ListToolsRequestSchema, (request, extra) => upstream.listTools(request.params, { signal: extra.signal }));
  server.setRequestHandler(types.CallToolRequestSchema, async (request, extra) => {
    const token = request.params._meta?.progressToken;
    const { _meta: _ignored, ...params } = request.params;
    return upstream.callTool(params, types.CallToolResultSchema, {
      signal: extra.signal,
      timeout: CALL_TIMEOUT_MS,
      resetTimeoutOnProgress: true,
      onprogress:
        token === undefined
          ? undefined
          : (progress) =>
              void extra
                .sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken: token } })
                .catch(() => undefined),
    });
  });

  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  await server.connect(new StdioServerTransport());
  process.stdin.once('end', () => void server.close());
  await closed;
  await upstream.close();
}
