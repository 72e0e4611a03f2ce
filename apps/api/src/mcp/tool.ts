import type { Request, Response } from 'express';
import { z } from 'zod';
import type { Tenant } from '@sdx/domain/api';
import type { AppDeps } from '../deps';

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
 * A tool of the MCP server (extensions-2.md 3). `route` names the REST route it stands for, as
 * routes/access.ts keys it: the tool is allowed to exactly the roles that route is.
 */
export interface McpTool<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  route: string;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  run(ctx: ToolContext, input: z.output<I>): Promise<ToolOutput<z.output<O>>>;
}

/** Keeps the input and output types of a tool's `run` tied to its schemas. */
export function defineTool<I extends z.ZodType, O extends z.ZodType>(tool: McpTool<I, O>): McpTool {
  return tool as unknown as McpTool;
}

/** The structured content of a failed call: the API's error identifier and message, with the same context fields the REST error carries. */
export const ToolError = z.looseObject({
  error: z.string().describe('The API error identifier: insufficient_credits, forbidden, job_not_found, validation_error, ...'),
  message: z.string().describe('What went wrong, for a person or a model.'),
});

/** A job as GET /v1/jobs/{job_id} renders it, without its result (read results with get_items). */
export const JobSummary = z.looseObject({
  id: z.string(),
  platform: z.string(),
  operation: z.string(),
  target: z.string(),
  status: z.enum(['queued', 'running', 'completed', 'failed', 'cancelled']),
  progress_current: z.number(),
  progress_total: z.number().nullable(),
  result_count: z.number().nullable(),
  reserved_credits: z.number(),
  billed_credits: z.number(),
  created_at: z.string(),
  finished_at: z.string().nullable(),
});

/** The target as a job takes it, and the limit (the operation's maximum when absent). */
export const jobInput = {
  platform: z.string().min(1).max(64).describe('A platform of list_operations, e.g. "twitter".'),
  operation: z.string().min(1).max(64).describe('An operation of that platform, e.g. "followers".'),
  target: z.string().min(1).max(2048).describe('What to read: a handle, URL or ID, as the operation\'s target kind says.'),
  limit: z.int().min(1).max(1_000_000).optional().describe('Most results to extract (and pay for); the operation\'s maximum when absent.'),
};

/** The opaque position to go on from; absent at the start. */
export const cursorInput = z.string().min(1).max(200);
