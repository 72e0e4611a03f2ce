import type { components, operations, paths } from './openapi';

/** Every operation the client calls: openapi.yaml's. */
export type Paths = paths;

type Schemas = components['schemas'];
/** A request body of openapi.yaml (`components.requestBodies`), as JSON. */
type Body<Name extends keyof components['requestBodies']> = components['requestBodies'][Name]['content']['application/json'];

export type Platform = Schemas['PlatformResponse'];
export type OperationCapability = Schemas['OperationCapability'];
export type Account = Schemas['AccountResponse'];
export type Usage = Schemas['UsageResponse'];
export type DailyUsage = Schemas['DailyUsage'];
export type Quote = Schemas['QuoteResponse'];
export type QuoteRequest = Body<'QuoteRequest'>;
export type ExtractionRequest = Body<'ExtractionRequest'>;
export type BatchRequest = Body<'BatchExtractionRequest'>;
export type Job = Schemas['JobResponse'];
export type JobStatus = Schemas['JobStatus'];
export type JobError = Schemas['JobError'];
export type Item = Schemas['Item'];
export type Batch = Schemas['BatchResponse'];
export type BatchStatus = Schemas['BatchStatus'];
export type Schedule = Schemas['ScheduleResponse'];
export type ScheduleRun = Schemas['ScheduleRun'];
export type ScheduleRequest = Body<'ScheduleCreateRequest'>;
export type SchedulePreviewRequest = Body<'SchedulePreviewRequest'>;
export type SchedulePreview = Schemas['SchedulePreviewResponse'];
export type Monitor = Schemas['Monitor'];
export type MonitorRun = Schemas['MonitorRun'];
export type MonitorAlert = Schemas['MonitorAlert'];
export type MonitorRequest = Schemas['MonitorCreateRequest'];
export type MonitorUpdate = Schemas['MonitorUpdateRequest'];
/** One series of a monitor: `{target, item_id (null for profiles), metric, points: [{at, value}]}`, points oldest first. */
export type MonitorSeries = Schemas['MonitorSeries'];
export type MonitorSeriesFilters = NonNullable<operations['getMonitorSeries']['parameters']['query']>;
/** One change a run recorded, newest first in the feed. */
export type MonitorChange = Schemas['MonitorChange'];
export type MonitorChangeFilters = Omit<NonNullable<operations['listMonitorChanges']['parameters']['query']>, 'limit' | 'starting_after'>;
export type User = Schemas['User'];
export type Workspace = Schemas['Workspace'];
export type Member = Schemas['Member'];
export type Invitation = Schemas['Invitation'];
export type CreatedInvitation = Schemas['CreatedInvitation'];
export type SignedIn = Schemas['SignedInResponse'];
/** Sign-up's answer when the service verifies emails: no session until the mailed link is followed. */
export type VerificationRequired = Schemas['VerificationRequiredResponse'];
export type Session = Schemas['SessionResponse'];
export type SignUpRequest = Schemas['SignUpRequest'];
export type LoginRequest = Schemas['LoginRequest'];
/** A new two-factor secret: `secret` (base32, to type) and `otpauth_url` (to show as a QR code). */
export type TwoFactorSetup = Schemas['TwoFactorSetupResponse'];
/** The ten single-use recovery codes, answered once when two-factor sign-in is turned on. */
export type RecoveryCodes = Schemas['RecoveryCodesResponse'];
export type ApiKey = Schemas['ApiKey'];
export type CreatedApiKey = Schemas['CreatedApiKey'];
export type ApiKeyCreateRequest = Body<'ApiKeyCreateRequest'>;
export type AuditEvent = Schemas['AuditEvent'];

export type JobItemsPage = Schemas['JobItemsPage'];
export type JobListFilters = Omit<NonNullable<operations['listJobs']['parameters']['query']>, 'limit'>;
export type WebhookEventType = Schemas['WebhookEventType'];
export type WebhookEndpoint = Schemas['Webhook'];
/** A new endpoint, or one whose secret was just rotated: `secret` is in this answer only. */
export type WebhookEndpointWithSecret = Schemas['CreatedWebhook'];
export type WebhookCreateRequest = Schemas['WebhookCreateRequest'];
export type WebhookUpdateRequest = Schemas['WebhookUpdateRequest'];
export type WebhookDelivery = Schemas['WebhookDelivery'];
/** The body of a webhook delivery: `data` is the Job, Batch or ScheduleRun as the API renders it (a job without `result`). */
export type WebhookEvent = Schemas['WebhookEvent'];
/** A bucket jobs and batches deliver their export to; never with its secret access key. */
export type Destination = Schemas['Destination'];
export type DestinationCreateRequest = Schemas['DestinationCreateRequest'];
/** A job's or batch's delivery to its destination (`delivery` of a Job or Batch; null without one). */
export type Delivery = NonNullable<Schemas['Delivery']>;

/** Billing (extensions-2.md 1, extensions-3.md 2). */
export type Billing = Schemas['Billing'];
export type Plan = Schemas['Plan'];
/** A workspace's Stripe subscription (null in `Billing` when it never subscribed). */
export type Subscription = NonNullable<Schemas['Subscription']>;
export type SubscriptionRequest = Schemas['SubscriptionRequest'];
export type Checkout = Schemas['CheckoutResponse'];
export type BillingPortal = Schemas['BillingPortal'];
export type Invoice = Schemas['Invoice'];

/** Download formats of exports. */
export type ExportFormat = components['parameters']['ExportFormat'];

export const TERMINAL_JOB_STATUSES: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);
