import type { Request, Response } from 'express';
import type { Tenant } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import type { Route } from '../routes/route';
import { componentSchema, type JsonSchema, withoutProperties } from './contract-schema';

/** One progress notification (notifications/progress): `progress` only ever grows within a call. */
export interface ProgressUpdate {
  progress: number;
  total?: number;
  message?: string;
}

/** What a tool call runs with: the request's tenant (resolved once by the auth middleware), its process's services, the output budget. */
export interface ToolContext {
  deps: AppDeps;
  tenant: Tenant;
  /** The HTTP request and response of the /mcp call (its request ID, the role check of middleware/access.ts). */
  req: Request;
  res: Response;
  /** Bytes of JSON the structured content may take (MCP_MAX_OUTPUT_BYTES less the text's summary line). */
  budget: number;
  /** Sends a progress notification when the call carried `_meta.progressToken`; else does nothing. */
  progress(update: ProgressUpdate): Promise<void>;
  /** Aborted when the client cancels the call, disconnects, or the process drains. */
  signal: AbortSignal;
}

/** What a tool answers: its structured content (within `budget`) and a one-line summary for the text. */
export interface ToolOutput<O> {
  structured: O;
  summary: string;
}

export interface ToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/**
 * A tool of the MCP server (extensions-2.md 3). `route` is the REST route it stands for (its
 * `route()` declaration): the tool is allowed to exactly the roles that route is. Its input and
 * output are JSON Schemas taken from openapi.yaml (mcp/contract-schema.ts: the request fields
 * and parameters of that route's operation, the components it answers with); `run` is given the
 * arguments once they are checked against the input schema, typed `I` from the generated types.
 */
export interface McpTool<I = Record<string, unknown>, O = unknown> {
  name: string;
  description: string;
  route: Route;
  input: JsonSchema;
  output: JsonSchema;
  annotations: ToolAnnotations;
  run(ctx: ToolContext, input: I): Promise<ToolOutput<O>>;
}

/** Keeps the input and output types of a tool's `run` in one declaration. */
export function defineTool<I, O>(tool: McpTool<I, O>): McpTool {
  return tool as unknown as McpTool;
}

/** The structured content of a failed call: the API's error identifier and message, with the same context fields the REST error carries. */
export const ToolError: JsonSchema = {
  type: 'object',
  properties: {
    error: {
      type: 'string',
      description: 'The API error identifier: insufficient_credits, forbidden, job_not_found, validation_error, ...',
    },
    message: { type: 'string', description: 'What went wrong, for a person or a model.' },
  },
  required: ['error', 'message'],
};

/** A job as GET /v1/jobs/{job_id} renders it (the contract's JobResponse), without its result (read results with get_items). */
export const JobSummary: JsonSchema = withoutProperties(componentSchema('JobResponse'), ['result']);

/** The platform as the job tools take it: required of an agent (no default to guess), one that list_operations names. */
export const PLATFORM_ARGUMENT: JsonSchema = { description: 'A platform of list_operations, e.g. "twitter".' };

/**
 * The operation as the job tools take it: any name, so that one the catalog does not have is
 * answered `unsupported_operation` (naming list_operations), not a bare enum mismatch.
 */
export const OPERATION_ARGUMENT: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 64,
  description: 'An operation of that platform, e.g. "followers".',
};

/** An ID an agent passes (no URL bounds it): as long as the service's IDs at most. */
export const ID_ARGUMENT: JsonSchema = { minLength: 1, maxLength: 64 };

/** The opaque position to go on from; absent at the start. */
export const CURSOR_ARGUMENT: JsonSchema = { type: 'string', minLength: 1, maxLength: 200 };
