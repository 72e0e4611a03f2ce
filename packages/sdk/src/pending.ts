import type { components } from './openapi';

/**
 * Operations of ../shared/spec/extensions.md (sections 5, 6 and 7) that openapi.yaml does not
 * describe yet, typed in the shape openapi-typescript generates so the client calls them as it
 * calls the generated ones. When openapi.yaml gains an operation, `npm run generate:types`
 * types it from the contract and its entry here is deleted (an entry that remains intersects
 * with the generated one, so it can only narrow, never contradict).
 */

type Schemas = components['schemas'];

interface Json<T> {
  headers: { [name: string]: unknown };
  content: { 'application/json': T };
}
interface NoContent {
  headers: { [name: string]: unknown };
  content?: never;
}
interface EventStream {
  headers: { [name: string]: unknown };
  content: { 'text/event-stream': string };
}
type Operation<Query, Path, Body, Responses> = {
  parameters: { query?: Query; header?: { 'X-Workspace-ID'?: string; 'X-CSRF-Token'?: string }; cookie?: never } & ([Path] extends [never] ? { path?: never } : { path: Path });
  responses: Responses;
} & ([Body] extends [undefined] ? { requestBody?: never } : { requestBody: { content: { 'application/json': Body } } });

/** Events a webhook endpoint may subscribe to (extensions.md 5); `*` means all. */
export type WebhookEventType =
  | 'job.completed'
  | 'job.failed'
  | 'job.cancelled'
  | 'batch.completed'
  | 'batch.failed'
  | 'batch.cancelled'
  | 'schedule.run.dispatched'
  | 'schedule.run.skipped'
  | 'webhook.test';

export interface WebhookEndpoint {
  id: string;
  url: string;
  events: Array<WebhookEventType | '*'>;
  description: string | null;
  enabled: boolean;
  created_at: string;
}

/** A new endpoint, or one whose secret was just rotated: `secret` (`whsec_...`) is shown in this answer only. */
export interface WebhookEndpointWithSecret extends WebhookEndpoint {
  secret: string;
}

export interface WebhookCreateRequest {
  url: string;
  events: Array<WebhookEventType | '*'>;
  description?: string;
}

export interface WebhookUpdateRequest {
  url?: string;
  events?: Array<WebhookEventType | '*'>;
  description?: string | null;
  enabled?: boolean;
}

export interface WebhookDelivery {
  id: string;
  event_id: string;
  event_type: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  response_status: number | null;
  error: string | null;
  next_attempt_at: string | null;
  created_at: string;
  delivered_at: string | null;
}

/** A page of a completed job's result (`GET /v1/jobs/{job_id}/items`). */
export interface JobItemsPage {
  items: Schemas['Item'][];
  next_cursor: string | null;
}

export interface JobListFilters {
  /** An ID of the previous page; the next page holds older jobs. */
  starting_after?: string;
  status?: Schemas['JobStatus'];
  platform?: string;
  operation?: string;
  batch_id?: string;
  schedule_id?: string;
  /** false leaves `result` null in the list (default true). */
  include_result?: boolean;
}

type Paging = { starting_after?: string };
type WebhookId = { webhook_id: string };

export interface PendingPaths {
  '/v1/jobs': {
    get: Operation<JobListFilters, never, undefined, { 200: Json<Schemas['JobResponse'][]> }>;
  };
  '/v1/batches': {
    get: Operation<Paging, never, undefined, { 200: Json<Schemas['BatchResponse'][]> }>;
  };
  '/v1/schedules': {
    get: Operation<Paging, never, undefined, { 200: Json<Schemas['ScheduleResponse'][]> }>;
  };
  '/v1/jobs/{job_id}/items': {
    get: Operation<{ limit?: number; cursor?: string }, { job_id: string }, undefined, { 200: Json<JobItemsPage> }>;
  };
  '/v1/jobs/{job_id}/events': {
    get: Operation<never, { job_id: string }, undefined, { 200: EventStream }>;
  };
  '/v1/batches/{batch_id}/events': {
    get: Operation<never, { batch_id: string }, undefined, { 200: EventStream }>;
  };
  '/v1/webhooks': {
    get: Operation<never, never, undefined, { 200: Json<WebhookEndpoint[]> }>;
    post: Operation<never, never, WebhookCreateRequest, { 201: Json<WebhookEndpointWithSecret> }>;
  };
  '/v1/webhooks/{webhook_id}': {
    get: Operation<never, WebhookId, undefined, { 200: Json<WebhookEndpoint> }>;
    patch: Operation<never, WebhookId, WebhookUpdateRequest, { 200: Json<WebhookEndpoint> }>;
    delete: Operation<never, WebhookId, undefined, { 204: NoContent }>;
  };
  '/v1/webhooks/{webhook_id}/rotate-secret': {
    post: Operation<never, WebhookId, undefined, { 200: Json<WebhookEndpointWithSecret> }>;
  };
  '/v1/webhooks/{webhook_id}/test': {
    post: Operation<never, WebhookId, undefined, { 202: Json<WebhookDelivery> }>;
  };
  '/v1/webhooks/{webhook_id}/deliveries': {
    get: Operation<{ limit?: number } & Paging, WebhookId, undefined, { 200: Json<WebhookDelivery[]> }>;
  };
  '/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver': {
    post: Operation<never, WebhookId & { delivery_id: string }, undefined, { 202: Json<WebhookDelivery> }>;
  };
}
