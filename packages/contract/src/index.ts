import type { components, operations, paths } from './openapi';

/**
 * The HTTP contract of the service: openapi.yaml at the repository root, the types and enum
 * values generated from it (`npm run generate:types` writes src/openapi.d.ts and src/events.ts)
 * and the document's loader. Browser code (the console) takes src/browser.ts instead: the
 * generated part alone, nothing of Node.
 */

export type { components, operations, paths };

type Schemas = components['schemas'];

export type JobResponse = Schemas['JobResponse'];
export type JobStatus = Schemas['JobStatus'];
export type JobError = Schemas['JobError'];
export type JobErrorCode = Schemas['JobErrorCode'];
export type BatchResponse = Schemas['BatchResponse'];
export type BatchChild = Schemas['BatchChild'];
export type BatchStatus = Schemas['BatchStatus'];
export type ScheduleResponse = Schemas['ScheduleResponse'];
export type ScheduleRun = Schemas['ScheduleRun'];
export type AccountResponse = Schemas['AccountResponse'];
export type UsageResponse = Schemas['UsageResponse'];
export type DailyUsage = Schemas['DailyUsage'];
export type QuoteResponse = Schemas['QuoteResponse'];
export type SchedulePreviewResponse = Schemas['SchedulePreviewResponse'];
export type PlatformResponse = Schemas['PlatformResponse'];
export type OperationCapability = Schemas['OperationCapability'];
export type OperationName = Schemas['OperationName'];
export type HTTPValidationError = Schemas['HTTPValidationError'];
export type ValidationErrorItem = Schemas['ValidationError'];
export type ServiceError = Schemas['ServiceError'];
export type ExtractionFailedError = Schemas['ExtractionFailedError'];
export type HealthResponse = Schemas['HealthResponse'];
export type ReadinessResponse = Schemas['ReadinessResponse'];
export type Item = Schemas['Item'];
export type ProfileItem = Schemas['ProfileItem'];
export type PostItem = Schemas['PostItem'];
export type CommentItem = Schemas['CommentItem'];
export type HighlightItem = Schemas['HighlightItem'];
export type StoryItem = Schemas['StoryItem'];
export type TranscriptItem = Schemas['TranscriptItem'];
export type PlaylistItem = Schemas['PlaylistItem'];
export type AdItem = Schemas['AdItem'];
export type AdvertiserItem = Schemas['AdvertiserItem'];
export type AnalyticsItem = Schemas['AnalyticsItem'];
export type Metrics = Schemas['Metrics'];
export type TranscriptSegment = Schemas['TranscriptSegment'];
export type ProfileBundle = Schemas['ProfileBundle'];

type RequestBodies = components['requestBodies'];
type JsonBody<K extends keyof RequestBodies> = RequestBodies[K]['content']['application/json'];

/**
 * Request bodies as a caller sends them: keys with a default (platform, limit, include_posts,
 * overlap_policy, ...) are optional. The API's validator fills those defaults in before a route
 * runs, and the domain applies the same defaults when a key is absent.
 */
export type ExtractionRequest = JsonBody<'ExtractionRequest'>;
export type BatchExtractionRequest = JsonBody<'BatchExtractionRequest'>;
export type ScheduleCreateRequest = JsonBody<'ScheduleCreateRequest'>;
/** PUT /v1/schedules/{schedule_id} takes the body of POST /v1/schedules. */
export type ScheduleUpdateRequest = ScheduleCreateRequest;
export type QuoteRequest = JsonBody<'QuoteRequest'>;
export type SchedulePreviewRequest = JsonBody<'SchedulePreviewRequest'>;
export type ApiKeyCreateRequest = JsonBody<'ApiKeyCreateRequest'>;

/** Every operationId of the contract (one API route file per operationId). */
export type OperationId = keyof operations;

/** The values of the contract's enums that code needs at run time, generated with the types. */
export { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './events';

export { CONTRACT_CACHE_DIR, OPENAPI_PATH, contractDigest, loadOpenApiDocument } from './document';
export type { OpenApiDocument } from './document';
