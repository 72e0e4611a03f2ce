export { Client } from './client';
export { type ClientOptions, DEFAULT_BASE_URL } from './core';
export {
  ApiError,
  ConnectionError,
  type ErrorDetail,
  InsufficientCreditsError,
  RateLimitError,
  SdxError,
  TimeoutError,
  type ValidationIssue,
  WebhookVerificationError,
} from './errors';
export type { WaitOptions } from './follow';
export { type OperationLimits, operationLimits } from './limits';
export { List, type Page } from './paging';
export type { CreateOptions, ExtractOptions, JobListParams } from './resources/jobs';
export type { BatchListParams } from './resources/batches';
export type { MonitorListParams, SeriesExportOptions } from './resources/monitors';
export type { DownloadResult, ExportOptions, NodeWritableLike, OpenedExport } from './resources/exports';
export { readEvents, type ServerSentEvent } from './sse';
export type { RetryPolicy } from './transport';
export * from './types';
export { type HeadersLike, signWebhook, verifyWebhook, type VerifyOptions } from './webhook-signature';
export type { components, operations, paths } from './openapi';
