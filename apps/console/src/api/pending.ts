import type { components } from '@sdx/contract';

/**
 * Operations of extensions.md sections 5 to 7 (webhooks, cursor paging and job filters, a
 * result page by page) in the form openapi-typescript generates. Each goes away from here once
 * openapi.yaml describes it and `npm run generate:types` has written it into the contract.
 */
type Item = components['schemas']['Item'];

type Responses<Response, Status extends number> = { [S in Status]: { headers: Record<string, unknown>; content: { 'application/json': Response } } };
type Params<Query, Path> = { query?: Query; header?: never; cookie?: never } & ([Path] extends [never] ? { path?: never } : { path: Path });
type Op<Query, Path, Body, Response, Status extends number = 200> = [Body] extends [never]
  ? { parameters: Params<Query, Path>; requestBody?: never; responses: Responses<Response, Status> }
  : { parameters: Params<Query, Path>; requestBody: { content: { 'application/json': Body } }; responses: Responses<Response, Status> };
type NoBody = never;

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  created_at: string;
}
export type CreatedWebhook = Webhook & { secret: string };
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
export interface WebhookCreateRequest {
  url: string;
  events: string[];
  description?: string | null;
}
export type WebhookUpdateRequest = Partial<WebhookCreateRequest> & { enabled?: boolean };
export interface JobItemsPage {
  items: Item[];
  next_cursor: string | null;
}
export interface JobFilters {
  limit?: number;
  starting_after?: string;
  status?: components['schemas']['JobStatus'];
  platform?: string;
  operation?: string;
  batch_id?: string;
  schedule_id?: string;
  include_result?: boolean;
}

export interface PendingSchemas {
  Webhook: Webhook;
  CreatedWebhook: CreatedWebhook;
  WebhookDelivery: WebhookDelivery;
}

type WebhookPath = { webhook_id: string };

export interface PendingPaths {
  '/v1/jobs': { get: Op<JobFilters, never, NoBody, components['schemas']['JobResponse'][]> };
  '/v1/batches': { get: Op<{ limit?: number; starting_after?: string; include_jobs?: boolean }, never, NoBody, components['schemas']['BatchResponse'][]> };
  '/v1/schedules': { get: Op<{ limit?: number; starting_after?: string }, never, NoBody, components['schemas']['ScheduleResponse'][]> };
  '/v1/jobs/{job_id}/items': { get: Op<{ limit?: number; cursor?: string }, { job_id: string }, NoBody, JobItemsPage> };
  '/v1/webhooks': {
    get: Op<{ limit?: number }, never, NoBody, Webhook[]>;
    post: Op<never, never, WebhookCreateRequest, CreatedWebhook, 201>;
  };
  '/v1/webhooks/{webhook_id}': {
    get: Op<never, WebhookPath, NoBody, Webhook>;
    patch: Op<never, WebhookPath, WebhookUpdateRequest, Webhook>;
    delete: Op<never, WebhookPath, NoBody, never, 204>;
  };
  '/v1/webhooks/{webhook_id}/rotate-secret': { post: Op<never, WebhookPath, NoBody, CreatedWebhook> };
  '/v1/webhooks/{webhook_id}/test': { post: Op<never, WebhookPath, NoBody, WebhookDelivery, 200 | 201 | 202> };
  '/v1/webhooks/{webhook_id}/deliveries': { get: Op<{ limit?: number; starting_after?: string }, WebhookPath, NoBody, WebhookDelivery[]> };
  '/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver': {
    post: Op<never, WebhookPath & { delivery_id: string }, NoBody, WebhookDelivery, 200 | 201 | 202>;
  };
}
