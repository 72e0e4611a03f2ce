import type { Request, Response } from 'express';
import { z } from 'zod';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { ApiError, RequestValidationError, type Tenant, type ValidationIssue } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { requireAccess } from '../middleware/access';
import { dependencyError } from '../middleware/errors';
import { jsonBytes } from './bound';
import { type McpTool, type ToolContext, ToolError } from './tool';
import { cancelJob } from './tools/cancel_job';
import { extract } from './tools/extract';
import { getItems } from './tools/get_items';
import { getJob } from './tools/get_job';
import { getUsage } from './tools/get_usage';
import { listOperations } from './tools/list_operations';
import { quote } from './tools/quote';
import { startJob } from './tools/start_job';
import { createMonitor } from './tools/create_monitor';
import { getSeries } from './tools/get_series';
import { listChanges } from './tools/list_changes';

/** The tools of extensions-2.md 3 and the monitors' (extensions-3.md 3), in the order tools/list gives them. */
export const TOOLS: readonly McpTool[] = [
  listOperations,
  quote,
  extract,
  startJob,
  getJob,
  getItems,
  cancelJob,
  getUsage,
  createMonitor,
  getSeries,
  listChanges,
];

const SERVER_INFO = { name: 'sdx', title: 'Social data extraction', version: '1.0.0' };

const INSTRUCTIONS =
  'Extracts public social-network data, billed in credits. list_operations shows what exists and its prices; quote prices a job; ' +
  'extract runs a small job and waits; start_job starts any job and answers at once (follow it with get_job); get_items pages through results. ' +
  'Every answer stays within a size bound: when truncated is true or next_cursor is set, call get_items with that cursor to go on.';

/** Room kept in a result's text for its summary line; the structured content gets the rest of the bound. */
const SUMMARY_BYTES = 400;

/** Any JSON value, said in keywords every client's validator reads (the open part of a loose object). */
const ANY_JSON_VALUE = {
  anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }, { type: 'object' }, { type: 'array' }, { type: 'null' }],
};

/** Keywords that describe a schema rather than constrain it: they stay beside an anyOf. */
const ANNOTATIONS = new Set(['title', 'description', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly']);

/**
 * A JSON Schema said portably (MCP Inspector --strict, and clients whose validators read a
 * subset): a list of types (`type: ["string", "null"]`) becomes an anyOf of one
 * type each, and an open object's `additionalProperties: {}` or `true` names any JSON value.
 */
export function portableSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(portableSchema);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
    if (key === 'properties' || key === 'definitions' || key === '$defs' || key === 'patternProperties') {
      out[key] = Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([name, sub]) => [name, portableSchema(sub)]));
    } else if (
      key === 'additionalProperties' &&
      (value === true || (typeof value === 'object' && value !== null && Object.keys(value).length === 0))
    ) {
      out[key] = ANY_JSON_VALUE;
    } else {
      out[key] = typeof value === 'object' ? portableSchema(value) : value;
    }
  }
  if (!Array.isArray(out.type)) return out;
  const { type: types, ...rest } = out as { type: string[] } & Record<string, unknown>;
  const annotations = Object.fromEntries(Object.entries(rest).filter(([key]) => ANNOTATIONS.has(key)));
  const constraints = Object.fromEntries(Object.entries(rest).filter(([key]) => !ANNOTATIONS.has(key)));
  return { ...annotations, anyOf: types.map((type) => (type === 'null' ? { type } : { type, ...constraints })) };
}

/**
 * tools/list's answer, computed once per process. A tool's output schema is its success shape
 * or the error shape ({error, message}): the SDK's client checks structured content against it,
 * errors included.
 */
const TOOL_LIST: Tool[] = TOOLS.map((tool) => ({
  name: tool.name,
  title: tool.annotations.title,
  description: tool.description,
  inputSchema: { type: 'object', ...(portableSchema(tool.input) as object) },
  outputSchema: { type: 'object', anyOf: [portableSchema(tool.output), portableSchema(ToolError)] },
  annotations: tool.annotations,
}));

const BY_NAME = new Map(TOOLS.map((tool) => [tool.name, tool]));

/** Each tool's arguments checked against its input schema (openapi.yaml's, mcp/contract-schema.ts), made once per process. */
const ARGUMENTS = new Map(TOOLS.map((tool) => [tool.name, z.fromJSONSchema(tool.input as Parameters<typeof z.fromJSONSchema>[0])]));

/** A POST past the workspace's rate limit: its tools/call is answered with a tool error, not run. */
export interface RateLimited {
  limit: number;
  /** Seconds until the window ends. */
  retryAfter: number;
}

/** What one /mcp request serves its tools with. */
export interface McpRequestContext {
  deps: AppDeps;
  tenant: Tenant;
  req: Request;
  res: Response;
  /** Set when the POST's rate-limit point was refused. */
  limited?: RateLimited;
}

/**
 * The MCP server of one /mcp request (stateless: a server and a transport per request, so any
 * API process answers any call). The tool list is computed once per process; only the
 * handlers, bound to this request's tenant, are made here.
 */
export function mcpServer(request: McpRequestContext): Server {
  const { limited: _limited, ...context } = request;
  const server = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOL_LIST }));
  server.setRequestHandler(CallToolRequestSchema, async (call, extra) => {
    const tool = BY_NAME.get(call.params.name);
    const maxBytes = request.deps.services.config.mcpMaxOutputBytes;
    // Past the limit the tool does not run: a tool error the agent can read, with when to retry (extensions-3.md 1).
    if (request.limited) {
      const { limit, retryAfter } = request.limited;
      return failure(
        new ApiError('rate_limit_exceeded', `Rate limit of ${limit} requests per minute exceeded; retry in ${retryAfter} s.`, {
          limit,
          retry_after: retryAfter,
        }),
        maxBytes,
      );
    }
    // An unknown tool is a protocol error (the MCP specification's -32602), not a tool result.
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${call.params.name.slice(0, 100)}; tools/list names them.`);
    const token = call.params._meta?.progressToken;
    const signal = request.deps.draining ? AbortSignal.any([extra.signal, request.deps.draining]) : extra.signal;
    const ctx: ToolContext = {
      ...context,
      budget: maxBytes - SUMMARY_BYTES,
      signal,
      progress: async (update) => {
        if (token === undefined || signal.aborted) return;
        await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, ...update } });
      },
    };
    try {
      // The REST route's declared access, enforced by the same check and in the same order, before the input is read (it throws ApiError forbidden).
      const access = tool.route.access;
      if (access !== 'public') requireAccess(access)(request.req, request.res, () => undefined);
      const parsed = ARGUMENTS.get(tool.name)!.safeParse(call.params.arguments ?? {});
      if (!parsed.success) throw new RequestValidationError(issuesOf(parsed.error));
      const output = await tool.run(ctx, parsed.data as Record<string, unknown>);
      return success(output.structured, output.summary, maxBytes);
    } catch (error) {
      if (error instanceof ApiError || error instanceof RequestValidationError) return failure(error, maxBytes);
      const dependency = dependencyError(error, request.deps.services.log, request.res.locals.requestId);
      if (dependency) return failure(dependency, maxBytes);
      request.deps.services.log.error({ err: error, requestId: request.res.locals.requestId, tool: tool.name }, 'mcp tool failed');
      return failure(
        new ApiError('internal_error', 'Something went wrong on our side.', { request_id: request.res.locals.requestId }),
        maxBytes,
      );
    }
  });
  return server;
}

/** Zod's issues in the shape of the API's validation errors (HTTPValidationError), located under `arguments`. */
function issuesOf(error: z.ZodError): ValidationIssue[] {
  return error.issues.map((issue) => ({
    loc: ['arguments', ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))],
    msg: issue.message,
    type: issue.code,
  }));
}

/** A tool result: the structured content, and as text its summary line then the same content as JSON. */
function success(structured: unknown, summary: string, maxBytes: number): CallToolResult {
  const line = fitLine(summary);
  const json = JSON.stringify(structured);
  const text = `${line}\n${json}`;
  if (Buffer.byteLength(text) > maxBytes) throw new Error(`tool output of ${Buffer.byteLength(text)} bytes exceeds MCP_MAX_OUTPUT_BYTES`);
  return { content: [{ type: 'text', text }], structuredContent: structured as Record<string, unknown> };
}

/** An error as a tool result (isError): `{error, message}` with the API's identifier and the context fields of the REST error. */
function failure(error: ApiError | RequestValidationError, maxBytes: number): CallToolResult {
  let structured: Record<string, unknown> =
    error instanceof ApiError
      ? { error: error.code, message: error.message, ...error.fields }
      : { error: 'validation_error', message: error.message, detail: error.issues };
  if (jsonBytes(structured) > maxBytes - SUMMARY_BYTES)
    structured = { error: structured.error, message: fitLine(String(structured.message)) };
  return {
    isError: true,
    content: [
      {
        type: 'text',
        text: `${fitLine(`Error ${String(structured.error)}: ${String(structured.message)}`)}\n${JSON.stringify(structured)}`,
      },
    ],
    structuredContent: structured,
  };
}

/** A line of at most SUMMARY_BYTES - 1 bytes (cut at a character). */
function fitLine(line: string): string {
  const flat = line.replace(/\s+/g, ' ');
  if (Buffer.byteLength(flat) < SUMMARY_BYTES) return flat;
  let cut = flat.slice(0, SUMMARY_BYTES - 4);
  while (Buffer.byteLength(cut) > SUMMARY_BYTES - 4) cut = cut.slice(0, -1);
  return `${cut}...`;
}
