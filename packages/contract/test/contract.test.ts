import { OPERATION_NAMES } from '@sdx/catalog';
import type { OpenAPIV3 } from 'express-openapi-validator/dist/framework/types';
import { existsSync } from 'node:fs';
import { ResponseContractError, createResponseValidator } from '@sdx/testing';
import {
  OPENAPI_PATH,
  loadOpenApiDocument,
  type AccountResponse,
  type BatchResponse,
  type JobResponse,
  type ScheduleResponse,
  type UsageResponse,
  type components,
} from '../src';

type Schemas = components['schemas'];

const validator = createResponseValidator();

function problemsOf(method: string, url: string, status: number, body: unknown, contentType?: string): string {
  try {
    validator.validate(method, url, status, body, contentType);
  } catch (error) {
    expect(error).toBeInstanceOf(ResponseContractError);
    return (error as Error).message;
  }
  throw new Error(`expected ${method} ${url} ${status} to be rejected`);
}

/** Returns a deep copy of `value` with the value at `path` set to `to` (removed when undefined). */
function altered(value: unknown, path: Array<string | number>, to: unknown): unknown {
  const copy = structuredClone(value);
  const parent = path.slice(0, -1).reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], copy) as Record<
    string | number,
    unknown
  >;
  const last = path[path.length - 1];
  if (to === undefined) delete parent[last];
  else parent[last] = to;
  return copy;
}

/** The part of a schema of openapi.yaml these tests read. */
interface SchemaNode {
  type?: string;
  enum?: unknown[];
  nullable?: boolean;
  description?: string;
  properties?: Record<string, SchemaNode>;
  required?: string[];
  [key: string]: unknown;
}

function isRef(node: unknown): node is OpenAPIV3.ReferenceObject {
  return node !== null && typeof node === 'object' && '$ref' in node && typeof node.$ref === 'string';
}

const post: Schemas['PostItem'] = {
  kind: 'post',
  platform: 'instagram',
  id: '3141592653',
  username: 'natgeo',
  caption: 'A glacier at dawn #ice',
  url: 'https://instagram.com/p/Cabc123',
  published_at: '2024-05-01T10:00:00Z',
  title: null,
  media_type: 'image',
  duration_seconds: null,
  hashtags: ['ice'],
  collaborator_usernames: [],
  metrics: { views: null, likes: 1200, comments: 34, shares: null },
};

const video: Schemas['PostItem'] = { ...post, kind: 'video', platform: 'youtube', title: 'Glaciers', duration_seconds: 61.5 };

const profile: Schemas['ProfileItem'] = {
  kind: 'profile',
  platform: 'instagram',
  id: '787132',
  username: 'natgeo',
  caption: null,
  url: 'https://instagram.com/natgeo',
  published_at: null,
  display_name: 'National Geographic',
  bio: 'Experience the world',
  avatar_url: null,
  verified: true,
  private: false,
  followers_count: 280000000,
  following_count: 150,
  posts_count: 30000,
};

const transcript: Schemas['TranscriptItem'] = {
  kind: 'transcript',
  platform: 'tiktok',
  id: '7301',
  username: 'someone',
  caption: null,
  url: null,
  published_at: null,
  language: 'en',
  text: 'hello world',
  segments: [{ start: 0, end: 1.5, text: 'hello world' }],
};

const job: JobResponse = {
  id: 'job_01HZX0000000000000000000',
  platform: 'instagram',
  operation: 'posts',
  target: 'natgeo',
  requested_limit: 2,
  include_posts: 0,
  status: 'completed',
  attempts: 1,
  max_attempts: 4,
  progress_stage: 'completed',
  progress_message: null,
  progress_current: 2,
  progress_total: 2,
  heartbeat_at: '2024-05-01T10:00:05.123Z',
  next_attempt_at: null,
  cancel_requested_at: null,
  result_count: 2,
  billed_units: 2,
  credit_rate: 2,
  results_per_credit: 1,
  reserved_credits: 0,
  billed_credits: 4,
  result: [post, video],
  result_expired: false,
  error: null,
  created_at: '2024-05-01T10:00:00.000Z',
  started_at: '2024-05-01T10:00:01.000Z',
  finished_at: '2024-05-01T10:00:06.000Z',
  cached: false,
  deduplicated: false,
  idempotent_replay: false,
  delivery: null,
};

const queuedJob: JobResponse = {
  ...job,
  status: 'queued',
  attempts: 0,
  progress_stage: 'queued',
  progress_current: 0,
  progress_total: null,
  heartbeat_at: null,
  result_count: null,
  billed_units: 0,
  billed_credits: 0,
  result: null,
  started_at: null,
  finished_at: null,
};

const failedJob: JobResponse = {
  ...queuedJob,
  status: 'failed',
  attempts: 4,
  progress_stage: 'failed',
  error: { code: 'retries_exhausted', message: 'upstream kept failing', retryable: false, last_code: 'upstream_unavailable' },
  finished_at: '2024-05-01T10:05:00Z',
};

const bundleJob: JobResponse = {
  ...job,
  operation: 'profile',
  requested_limit: 1,
  include_posts: 1,
  result: { profile, posts: [post] },
};

const batch: BatchResponse = {
  id: 'bat_01HZX0000000000000000000',
  platform: 'instagram',
  operation: 'profile',
  requested_limit: 1,
  include_posts: 0,
  target_count: 2,
  status: 'queued',
  queued_count: 2,
  running_count: 0,
  completed_count: 0,
  failed_count: 0,
  cancelled_count: 0,
  result_count: 0,
  reserved_credits: 2,
  billed_credits: 0,
  cancel_requested_at: null,
  created_at: '2024-05-01T10:00:00Z',
  jobs: [
    { id: 'job_a', target: 'natgeo', status: 'queued' },
    { id: 'job_b', target: 'nasa', status: 'queued' },
  ],
  idempotent_replay: false,
  delivery: null,
};

const schedule: ScheduleResponse = {
  id: 'sch_01HZX0000000000000000000',
  name: 'Daily natgeo',
  platform: 'instagram',
  operation: 'posts',
  targets: ['natgeo'],
  requested_limit: 12,
  include_posts: 0,
  frequency: 'daily',
  timezone: 'Europe/Paris',
  starts_at: '2024-05-01T09:00:00+02:00',
  next_run_at: '2024-05-02T07:00:00Z',
  last_run_at: '2024-05-01T07:00:00Z',
  status: 'active',
  paused_reason: null,
  overlap_policy: 'skip',
  delivery: 'all',
  destination_id: null,
  created_by: { kind: 'key', id: 'key_01HZX0000000000000000000' },
  created_at: '2024-04-30T12:00:00Z',
  updated_at: '2024-04-30T12:00:00Z',
  runs: [
    {
      id: 'run_1',
      schedule_id: 'sch_1',
      trigger: 'manual',
      scheduled_for: '2024-05-01T07:00:00Z',
      status: 'queued',
      job_id: 'job_a',
      batch_id: null,
      error: null,
      created_at: '2024-05-01T07:00:00Z',
      dispatched_at: '2024-05-01T07:00:00Z',
    },
    {
      id: 'run_0',
      schedule_id: 'sch_1',
      trigger: 'scheduled',
      scheduled_for: '2024-04-30T07:00:00Z',
      status: 'failed',
      job_id: null,
      batch_id: null,
      error: { error: 'concurrent_job_limit_exceeded', message: 'too many active jobs', active: 5, limit: 5 },
      created_at: '2024-04-30T07:00:00Z',
      dispatched_at: null,
    },
  ],
};

const usage: UsageResponse = {
  period_start: '2024-05-01',
  credit_limit: 1000,
  units_used: 10,
  units_reserved: 2,
  units_remaining: 988,
  credits_used: 20,
  credits_reserved: 4,
  credits_remaining: 976,
  purchased_credits: 0,
  promotional_credits: 0,
  promotional_expires_at: null,
  lifetime_purchased: 0,
  lifetime_spent: 20,
};

const account: AccountResponse = {
  organization_id: 'ws_01HZX0000000000000000000',
  organization_name: 'Acme',
  monthly_quota: 1000,
  rate_limit_per_minute: 60,
  max_result_limit: 25000,
  max_active_jobs: 10,
  authenticated_key_id: 'key_01HZX0000000000000000000',
  auth_type: 'api_key',
  role: 'owner',
  user: null,
  workspaces: [{ id: 'ws_01HZX0000000000000000000', name: 'Acme', kind: 'team', role: 'owner', require_two_factor: false }],
  credits: { available_credits: 976, purchased_credits: 0, lifetime_purchased: 0, month_spent_credits: 24 },
};

describe('openapi.yaml', () => {
  const document = loadOpenApiDocument();
  const schemas = (document.components?.schemas ?? {}) as Record<string, SchemaNode>;

  it('parses as OpenAPI 3.0.3 version 1.0.0 at OPENAPI_PATH', () => {
    expect(existsSync(OPENAPI_PATH)).toBe(true);
    expect(document.openapi).toBe('3.0.3');
    expect(document.info.version).toBe('1.0.0');
  });

  it('lists every catalog operation name, and only those, in the operation enum', () => {
    expect(schemas.OperationName?.enum).toEqual([...OPERATION_NAMES].sort());
    expect(schemas.OperationName?.enum).toHaveLength(27);
  });

  it('declares every operationId the API routes are named after', () => {
    const ids = Object.values(document.paths).flatMap((item) =>
      Object.values(item as Record<string, { operationId?: string }>).map((op) => op.operationId),
    );
    expect(ids.sort()).toEqual(
      [
        'listPlatforms',
        'getAccount',
        'getCurrentUsage',
        'extract',
        'createJob',
        'listJobs',
        'getJob',
        'cancelJob',
        'exportJob',
        'listJobItems',
        'createBatch',
        'listBatches',
        'getBatch',
        'cancelBatch',
        'exportBatch',
        'createSchedule',
        'listSchedules',
        'getSchedule',
        'updateSchedule',
        'deleteSchedule',
        'pauseSchedule',
        'resumeSchedule',
        'runSchedule',
        'healthz',
        'readyz',
        'createQuote',
        'getDailyUsage',
        'previewSchedule',
        'getMetrics',
        'signUp',
        'logIn',
        'getSession',
        'logOut',
        'changePassword',
        'listDevMail',
        'listWorkspaces',
        'createWorkspace',
        'updateWorkspace',
        'listMembers',
        'updateMember',
        'removeMember',
        'createInvitation',
        'listInvitations',
        'revokeInvitation',
        'acceptInvitation',
        'previewInvitation',
        'createKey',
        'listKeys',
        'revokeKey',
        'listAuditEvents',
        'createWebhook',
        'listWebhooks',
        'getWebhook',
        'updateWebhook',
        'deleteWebhook',
        'rotateWebhookSecret',
        'testWebhook',
        'listWebhookDeliveries',
        'redeliverWebhookDelivery',
        'streamJobEvents',
        'streamBatchEvents',
        'createDestination',
        'listDestinations',
        'getDestination',
        'deleteDestination',
        'getOpenApiYaml',
        'getOpenApiJson',
        'getDocs',
        'getDocsScript',
        'verifyEmail',
        'resendVerification',
        'requestPasswordReset',
        'confirmPasswordReset',
        'setUpTwoFactor',
        'enableTwoFactor',
        'disableTwoFactor',
        'getBilling',
        'createCheckout',
        'receiveStripeWebhook',
        'listPayments',
        'updateAutoRecharge',
        'updateBillingLimits',
        'updateKey',
        'createSubscription',
        'cancelSubscription',
        'createBillingPortal',
        'listInvoices',
        'getProtectedResourceMetadata',
        'getMcpProtectedResourceMetadata',
        'getAuthorizationServerMetadata',
        'registerOAuthClient',
        'authorizeOAuthClient',
        'createOAuthToken',
        'revokeOAuthToken',
        'createOAuthConsent',
        'postMcpMessage',
        'openMcpStream',
        'endMcpSession',
        'createMonitor',
        'listMonitors',
        'getMonitor',
        'updateMonitor',
        'deleteMonitor',
        'pauseMonitor',
        'resumeMonitor',
        'runMonitor',
        'listMonitorRuns',
        'getMonitorSeries',
        'exportMonitorSeries',
        'listMonitorChanges',
      ].sort(),
    );
  });

  it('describes a job error the same way on JobResponse.error and in the 502 cause (JobError)', () => {
    const { nullable, description: _a, ...inline } = schemas.JobResponse?.properties?.error ?? {};
    const { description: _b, ...standalone } = schemas.JobError ?? {};
    expect(nullable).toBe(true);
    expect(inline).toEqual(standalone);
  });

  it('documents X-Request-ID on every response, rate-limit statuses on authenticated operations', () => {
    const deref = <T extends object>(value: T | OpenAPIV3.ReferenceObject): T => {
      let node: unknown = value;
      while (isRef(node))
        node = node.$ref
          .slice(2)
          .split('/')
          .reduce<unknown>((n, k) => (n as Record<string, unknown>)[k], document);
      return node as T;
    };
    const publicOperations = [
      'healthz',
      'readyz',
      'getMetrics',
      'listPlatforms',
      'signUp',
      'logIn',
      'getOpenApiYaml',
      'getOpenApiJson',
      'getDocs',
      'getDocsScript',
      'verifyEmail',
      'resendVerification',
      'requestPasswordReset',
      'confirmPasswordReset',
      'listDevMail',
      'receiveStripeWebhook',
      'getProtectedResourceMetadata',
      'getMcpProtectedResourceMetadata',
      'getAuthorizationServerMetadata',
      'registerOAuthClient',
      'authorizeOAuthClient',
      'createOAuthToken',
      'revokeOAuthToken',
      'previewInvitation',
    ];
    const sessionOperations = [
      'getSession',
      'logOut',
      'changePassword',
      'createWorkspace',
      'acceptInvitation',
      'setUpTwoFactor',
      'enableTwoFactor',
      'disableTwoFactor',
      'createOAuthConsent',
    ];
    for (const [path, item] of Object.entries(document.paths)) {
      // Every key of a path item of openapi.yaml is a method.
      for (const operation of Object.values(item) as OpenAPIV3.OperationObject[]) {
        const id = operation.operationId ?? '';
        const responses = operation.responses ?? {};
        const authenticated = !publicOperations.includes(id);
        expect({ id: operation.operationId, security: operation.security }).toEqual({
          id: operation.operationId,
          security: !authenticated ? [] : sessionOperations.includes(id) ? [{ SessionCookie: [] }] : undefined,
        });
        for (const [status, raw] of Object.entries(responses)) {
          const response = deref<OpenAPIV3.ResponseObject>(raw);
          expect({ id: operation.operationId, status, requestId: Boolean(response.headers?.['X-Request-ID']) }).toEqual({
            id: operation.operationId,
            status,
            requestId: true,
          });
          if (status === '429') expect(response.headers?.['Retry-After']).toBeDefined();
          if (authenticated && /^2/.test(status)) expect(response.headers?.['RateLimit-Remaining']).toBeDefined();
        }
        if (authenticated) {
          expect({ id: operation.operationId, statuses: ['401', '403', '422', '429', '503'].filter((c) => !(c in responses)) }).toEqual({
            id: operation.operationId,
            statuses: [],
          });
          const headerNames = (operation.parameters ?? [])
            .map((p) => deref<OpenAPIV3.ParameterObject>(p))
            .filter((p) => p.in === 'header')
            .map((p) => p.name);
          // A workspace_id in the path names the workspace; elsewhere X-Workspace-ID chooses it.
          if (!path.includes('{workspace_id}')) expect(headerNames).toContain('X-Workspace-ID');
          expect(headerNames).not.toContain('X-API-Key');
          expect(headerNames).not.toContain('Authorization');
        }
      }
    }
  });

  it('requires every property of every response object schema', () => {
    // Item `source` is optional: items stored before it existed carry none (docs/decisions.md).
    const items = [
      'ProfileItem',
      'PostItem',
      'CommentItem',
      'HighlightItem',
      'StoryItem',
      'TranscriptItem',
      'PlaylistItem',
      'AdItem',
      'AdvertiserItem',
      'AnalyticsItem',
    ];
    const optional: Record<string, string[]> = {
      BatchResponse: ['jobs'],
      // The live sources a job's attempts tried: on GET /v1/jobs/{job_id} once a live source was tried.
      JobResponse: ['attempt_sources'],
      // Stripe's event as Stripe sends it: the service reads it only after the signature holds.
      StripeEventEnvelope: ['id', 'type'],
      // `payment` on the payment events only; the 402's `key_id` with scope key, `required` as the 402 of credits has it.
      BillingEventData: ['payment', 'plan_id', 'previous_plan_id', 'invoice'],
      // A plan names only the limits it sets (PLANS); the others stay as the workspace has them.
      PlanLimits: ['rate_limit_per_minute', 'max_active_jobs'],
      SpendCapErrorDetail: ['required', 'key_id'],
      // A monitor's alert as its creator wrote it: no threshold for new_item, no target for every target.
      MonitorAlert: ['threshold', 'target'],
      ValidationError: ['input', 'ctx'],
      // Context keys present for only some causes of the identifier (openapi.yaml says which).
      InvalidRequestErrorDetail: ['limit', 'max_result_limit', 'max_sync_limit', 'use', 'include_posts', 'schedule_id', 'status'],
      InternalErrorDetail: ['request_id'],
      ForbiddenErrorDetail: ['required_role', 'required_auth'],
      ResultsNotReadyErrorDetail: ['job_id', 'status', 'batch_id'],
      ResultsExpiredErrorDetail: ['job_id', 'batch_id', 'job_ids'],
      RateLimitExceededErrorDetail: ['limit'],
      ConcurrentJobLimitErrorDetail: ['requested'],
      ...Object.fromEntries(items.map((name) => [name, ['source']])),
      // Ad reach: ads stored before it existed carry none (every new ad has it, null or a value).
      AdItem: ['source', 'reach'],
    };
    for (const [name, schema] of Object.entries(schemas)) {
      if (schema.type !== 'object' || !schema.properties || /Request$/.test(name)) continue;
      const notRequired = Object.keys(schema.properties).filter((key) => !(schema.required ?? []).includes(key));
      expect({ name, notRequired }).toEqual({ name, notRequired: optional[name] ?? [] });
    }
  });
});

describe('createResponseValidator', () => {
  it('accepts valid jobs: completed, queued, failed, profile bundle', () => {
    validator.validate('GET', '/v1/jobs/job_123', 200, job, 'application/json; charset=utf-8');
    validator.validate('POST', '/v1/jobs', 202, queuedJob);
    validator.validate('GET', '/v1/jobs/job_123', 200, failedJob);
    validator.validate('POST', '/v1/extract', 200, bundleJob);
    validator.validate('POST', '/v1/jobs/job_123/cancel', 200, { ...queuedJob, status: 'cancelled' });
    validator.validate('GET', '/v1/jobs?limit=5', 200, [job, queuedJob, failedJob]);
    validator.validate('POST', '/v1/extract', 200, { ...job, operation: 'transcript', result: [transcript] });
  });

  it('rejects broken jobs', () => {
    const { billed_credits: _dropped, ...missing } = job;
    expect(problemsOf('GET', '/v1/jobs/job_123', 200, missing)).toMatch(/missing property "billed_credits"/);
    expect(problemsOf('GET', '/v1/jobs/job_123', 200, { ...job, surprise: 1 })).toMatch(/unexpected property "surprise"/);
    expect(problemsOf('GET', '/v1/jobs/job_123', 200, { ...job, attempts: '1' })).toMatch(/\/attempts must be integer/);
    expect(problemsOf('GET', '/v1/jobs/job_123', 200, { ...job, status: 'done' })).toMatch(/\/status must be equal to one of/);
    expect(problemsOf('GET', '/v1/jobs/job_123', 200, { ...job, created_at: 'yesterday' })).toMatch(/created_at must match format/);
    expect(problemsOf('GET', '/v1/jobs/job_123', 200, { ...job, error: { code: 'oops', message: 'x', retryable: true } })).toMatch(
      /error\/code/,
    );
    expect(problemsOf('GET', '/v1/jobs/job_123', 200, altered(job, ['result', 0, 'metrics'], undefined))).toMatch(/result/);
    expect(problemsOf('GET', '/v1/jobs/job_123', 200, altered(job, ['result', 0, 'extra'], true))).toMatch(/result/);
    expect(problemsOf('GET', '/v1/jobs', 200, [job, { ...job, cached: null }])).toMatch(/\/1\/cached must be boolean/);
  });

  it('accepts a valid batch with and without child summaries', () => {
    validator.validate('POST', '/v1/batches', 202, batch);
    const { jobs: _jobs, ...withoutJobs } = batch;
    validator.validate('GET', '/v1/batches?include_jobs=false', 200, [withoutJobs]);
    validator.validate('POST', '/v1/batches/bat_1/cancel', 200, { ...batch, status: 'cancelled' });
  });

  it('rejects broken batches', () => {
    const { reserved_credits: _dropped, ...missing } = batch;
    expect(problemsOf('GET', '/v1/batches/bat_1', 200, missing)).toMatch(/missing property "reserved_credits"/);
    expect(problemsOf('GET', '/v1/batches/bat_1', 200, { ...batch, children: [] })).toMatch(/unexpected property "children"/);
    expect(problemsOf('GET', '/v1/batches/bat_1', 200, { ...batch, target_count: 2.5 })).toMatch(/target_count must be integer/);
    expect(problemsOf('GET', '/v1/batches/bat_1', 200, altered(batch, ['jobs', 0, 'result'], null))).toMatch(
      /jobs\/0 has unexpected property "result"/,
    );
  });

  it('accepts a valid schedule and rejects broken ones', () => {
    validator.validate('POST', '/v1/schedules', 201, schedule);
    validator.validate('POST', '/v1/schedules/sch_1/run', 202, schedule);
    validator.validate('PUT', '/v1/schedules/sch_1', 200, { ...schedule, status: 'paused', next_run_at: null });
    const { runs: _runs, ...missing } = schedule;
    expect(problemsOf('GET', '/v1/schedules/sch_1', 200, missing)).toMatch(/missing property "runs"/);
    expect(problemsOf('GET', '/v1/schedules/sch_1', 200, { ...schedule, cron: '* * * * *' })).toMatch(/unexpected property "cron"/);
    expect(problemsOf('GET', '/v1/schedules/sch_1', 200, { ...schedule, targets: 'natgeo' })).toMatch(/targets must be array/);
    expect(problemsOf('GET', '/v1/schedules', 200, [altered(schedule, ['runs', 0, 'trigger'], 'cron')])).toMatch(/trigger/);
  });

  it('accepts valid usage and account bodies and rejects broken ones', () => {
    validator.validate('GET', '/v1/usage/current', 200, usage);
    validator.validate('GET', '/v1/account', 200, account);
    validator.validate('GET', '/v1/account', 200, {
      ...account,
      auth_type: 'session',
      authenticated_key_id: null,
      user: { id: 'usr_1', email: null, display_name: 'Ann', avatar_url: null, two_factor_enabled: false },
    });
    const { lifetime_spent: _dropped, ...missing } = usage;
    expect(problemsOf('GET', '/v1/usage/current', 200, missing)).toMatch(/missing property "lifetime_spent"/);
    expect(problemsOf('GET', '/v1/usage/current', 200, { ...usage, bonus: 0 })).toMatch(/unexpected property "bonus"/);
    expect(problemsOf('GET', '/v1/usage/current', 200, { ...usage, period_start: '2024-05-01T00:00:00Z' })).toMatch(
      /period_start must match format "date"/,
    );
    expect(problemsOf('GET', '/v1/account', 200, { ...account, monthly_quota: '1000' })).toMatch(/monthly_quota must be integer/);
    expect(problemsOf('GET', '/v1/account', 200, { ...account, user: { id: 'usr_1' } })).toMatch(/missing property "email"/);
    const { workspaces: _ws, ...noWorkspaces } = account;
    expect(problemsOf('GET', '/v1/account', 200, noWorkspaces)).toMatch(/missing property "workspaces"/);
  });

  it('validates error bodies: service errors, validation errors, 402 and 502 details', () => {
    validator.validate('GET', '/v1/jobs/job_x', 404, { detail: { error: 'job_not_found', message: 'Job not found', job_id: 'job_x' } });
    validator.validate('POST', '/v1/jobs', 422, {
      detail: [{ loc: ['body', 'extra'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden', input: 1 }],
    });
    validator.validate('POST', '/v1/batches', 422, {
      detail: { error: 'duplicate_batch_target', message: 'Duplicate targets', duplicates: ['natgeo'] },
    });
    validator.validate('POST', '/v1/jobs', 402, {
      detail: { error: 'insufficient_credits', message: 'Not enough credits', available: 1, reserved: 4, required: 10 },
    });
    validator.validate('POST', '/v1/extract', 502, {
      detail: {
        error: 'extraction_failed',
        message: 'The extraction failed',
        job_id: 'job_1',
        cause: { code: 'target_not_found', message: 'No such user', retryable: false },
      },
    });
    expect(problemsOf('POST', '/v1/jobs', 402, { detail: { error: 'insufficient_credits', message: 'x' } })).toMatch(
      /missing property "available"/,
    );
    expect(problemsOf('GET', '/v1/jobs/job_x', 404, { error: 'job_not_found' })).toMatch(/missing property "detail"/);
    // Each identifier's context is typed: only the errors of the matching identifier are reported.
    expect(problemsOf('GET', '/v1/jobs/job_x', 404, { detail: { error: 'job_not_found', message: 'x' } })).toBe(
      'Response GET /v1/jobs/job_x 404 (getJob) does not match openapi.yaml:\n  - /detail is missing property "job_id"',
    );
    expect(problemsOf('GET', '/v1/jobs/job_x', 404, { detail: { error: 'no_such_error', message: 'x' } })).toMatch(
      /must match exactly one schema in oneOf/,
    );
    expect(problemsOf('GET', '/v1/jobs/job_x', 404, { detail: { error: 'not_found', message: 'x', job_id: 'job_x' } })).toMatch(
      /unexpected property "job_id"/,
    );
    expect(problemsOf('GET', '/v1/jobs/job_x', 404, { detail: 'Not found' })).toMatch(/detail must be object/);
    expect(problemsOf('POST', '/v1/jobs', 422, { detail: [{ loc: ['body'], msg: 'x' }] })).toMatch(/must match exactly one schema/);
  });

  it('validates health probes and the public platform list', () => {
    validator.validate('GET', '/healthz', 200, { status: 'ok' });
    validator.validate('GET', '/readyz', 503, { status: 'error', checks: { postgres: 'ok', redis: 'error' } });
    validator.validate('GET', '/v1/platforms', 200, [
      {
        platform: 'instagram',
        label: 'Instagram',
        operations: [
          {
            operation: 'profile',
            max_results: 1,
            default_limit: 1,
            credits_per_result: 1,
            results_per_credit: 1,
            base_credits: 0,
            requires_session: false,
            monitorable: true,
          },
        ],
        sources: [],
      },
    ]);
    expect(problemsOf('GET', '/readyz', 200, { status: 'ok' })).toMatch(/missing property "checks"/);
    expect(
      problemsOf('GET', '/v1/platforms', 200, [
        { platform: 'instagram', label: 'Instagram', operations: [{ operation: 'profile', max_results: 1 }] },
      ]),
    ).toMatch(/missing property "credits_per_result"/);
  });

  it('checks only the documented status and content type of downloads', () => {
    validator.validate('GET', '/v1/jobs/job_1/export?format=csv', 200, 'id,kind\n1,post\n', 'text/csv; charset=utf-8');
    validator.validate(
      'GET',
      '/v1/batches/bat_1/export?format=xlsx',
      200,
      Buffer.from('PK'),
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    );
    validator.validate('GET', '/v1/batches/bat_1/export', 200, [
      { job_id: 'job_1', target: 'a', status: 'completed', result_count: 0, result: [] },
    ]);
    expect(problemsOf('GET', '/v1/jobs/job_1/export', 200, '<html>', 'text/html')).toMatch(/content type text\/html is not documented/);
    expect(problemsOf('GET', '/v1/jobs/job_1/export', 201, 'a,b', 'text/csv')).toMatch(/status 201 is not documented/);
  });

  it('rejects a JSON body under a media type the operation does not document', () => {
    expect(
      problemsOf('GET', '/v1/jobs/job_x', 404, { detail: { error: 'job_not_found', message: 'x' } }, 'application/problem+json'),
    ).toMatch(/content type application\/problem\+json is not documented/);
    expect(problemsOf('GET', '/v1/jobs/job_1', 200, 'id,kind\n', 'text/csv')).toMatch(/content type text\/csv is not documented/);
  });

  it('accepts an empty 204 and rejects a body on it', () => {
    validator.validate('DELETE', '/v1/schedules/sch_1', 204, undefined);
    validator.validate('DELETE', '/v1/schedules/sch_1', 204, {});
    expect(problemsOf('DELETE', '/v1/schedules/sch_1', 204, schedule)).toMatch(/documents no body/);
  });

  it('rejects unknown paths, undocumented methods and undocumented statuses', () => {
    expect(problemsOf('GET', '/v1/nope', 200, {})).toMatch(/path \/v1\/nope is not documented/);
    expect(problemsOf('GET', '/v1/jobs/job_1/cancel/extra', 200, job)).toMatch(/is not documented/);
    expect(problemsOf('PATCH', '/v1/jobs/job_1', 200, job)).toMatch(/method PATCH is not documented/);
    expect(problemsOf('GET', '/v1/jobs/job_1', 418, {})).toMatch(/status 418 is not documented for getJob/);
    expect(problemsOf('POST', '/v1/jobs', 200, queuedJob)).toMatch(/status 200 is not documented for createJob/);
  });

  it('matches concrete paths to operations', () => {
    expect(validator.match('post', '/v1/jobs/job_123/cancel')).toEqual({
      operationId: 'cancelJob',
      method: 'post',
      template: '/v1/jobs/{job_id}/cancel',
      params: { job_id: 'job_123' },
    });
    expect(validator.match('GET', '/v1/usage/current')?.operationId).toBe('getCurrentUsage');
    expect(validator.match('GET', '/v1/schedules/sch_9?x=1')?.params).toEqual({ schedule_id: 'sch_9' });
    expect(validator.match('GET', '/v2/jobs')).toBeUndefined();
  });
});
