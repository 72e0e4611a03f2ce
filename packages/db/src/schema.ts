import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

/** Table types of the migrations in ./migrations. bigint columns are parsed to numbers (see pool.ts). */
type Timestamp = ColumnType<Date, Date | string, Date | string>;
type CreatedAt = ColumnType<Date, Date | string | undefined, Date | string>;
type Json = ColumnType<unknown, string, string>;

export interface WorkspacesTable {
  id: string;
  name: string;
  kind: Generated<string>;
  monthly_quota: number;
  rate_limit_per_minute: number;
  max_result_limit: number;
  max_active_jobs: number;
  created_at: CreatedAt;
  /** The user whose personal workspace this is; null for team workspaces. */
  personal_user_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** Session requests from members without two-factor sign-in are refused (API keys are not). */
  require_two_factor: Generated<boolean>;
  /** The user who made a team workspace (null for personal ones and when that user is gone). */
  created_by: ColumnType<string | null, string | null | undefined, string | null>;
  /** Credits the workspace may reserve or spend in a UTC calendar month; null: no cap. */
  monthly_credit_cap: ColumnType<number | null, number | null | undefined, number | null>;
  /** `billing.credits_low` each time the available credits cross below it; null: no alert. */
  low_credits_threshold: ColumnType<number | null, number | null | undefined, number | null>;
  auto_recharge_enabled: Generated<boolean>;
  auto_recharge_threshold: ColumnType<number | null, number | null | undefined, number | null>;
  auto_recharge_pack_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface ApiKeysTable {
  id: string;
  workspace_id: string;
  name: string | null;
  prefix: string;
  secret_hash: string;
  role: Generated<string>;
  created_at: CreatedAt;
  revoked_at: Timestamp | null;
  last_used_at: Timestamp | null;
  expires_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** The user or API key that made the key; null when made by the admin CLI. */
  created_by: ColumnType<string | null, string | null | undefined, string | null>;
  /** Credits submissions with this key may reserve in a UTC calendar month; null: no cap. */
  monthly_credit_cap: ColumnType<number | null, number | null | undefined, number | null>;
  /** `api_key`, or `oauth` for a grant a user consented to (its tokens are in oauth_tokens). */
  kind: ColumnType<ApiKeyKind, ApiKeyKind | undefined, ApiKeyKind>;
  /** The OAuth client of a grant; null for an API key (and for a grant whose client is gone). */
  oauth_client_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export type ApiKeyKind = 'api_key' | 'oauth';

/** An OAuth client registered by RFC 7591 dynamic registration (public clients only). */
export interface OAuthClientsTable {
  /** The client_id. */
  id: string;
  client_name: string | null;
  redirect_uris: ColumnType<string[], string[], string[]>;
  /** The client's registered metadata, as the registration answered it. */
  metadata: Json;
  created_at: CreatedAt;
}

/** An authorization code, by hash: 10 minutes, used once. */
export interface OAuthCodesTable {
  code_hash: string;
  client_id: string;
  /** The grant (api_keys row of kind oauth) the consent made. */
  key_id: string;
  user_id: string;
  workspace_id: string;
  role: string;
  redirect_uri: string;
  /** The PKCE S256 challenge. */
  code_challenge: string;
  scope: Generated<string>;
  created_at: CreatedAt;
  expires_at: Timestamp;
  used_at: Timestamp | null;
}

export type OAuthTokenKind = 'access' | 'refresh';

/** An access or refresh token of a grant, by hash. */
export interface OAuthTokensTable {
  token_hash: string;
  key_id: string;
  kind: OAuthTokenKind;
  /** The scope the grant was consented with, space-separated. */
  scope: Generated<string>;
  created_at: CreatedAt;
  expires_at: Timestamp;
  /** A used (rotated) refresh token, or a revoked token; presenting a retired refresh token revokes the grant. */
  retired_at: Timestamp | null;
}

/** A key's spend in its current period (month), kept where admission reads it. */
export interface ApiKeySpendTable {
  key_id: string;
  workspace_id: string;
  period_start: ColumnType<string, string, string>;
  spent: Generated<number>;
  /** `billing.spend_cap_reached` was sent for this key this period. */
  cap_alerted: Generated<boolean>;
}

/** The workspace's Stripe customer and the card auto-recharge charges. */
export interface BillingCustomersTable {
  workspace_id: string;
  stripe_customer_id: string;
  payment_method_id: string | null;
  card_brand: string | null;
  card_last4: string | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

/** The plan whose quota and limits a workspace has (extensions-3.md 2); no row: `free`. */
export interface WorkspacePlansTable {
  workspace_id: string;
  plan_id: string;
  /** When the paid invoice that set the plan was made (an older invoice's late event changes nothing); null: not set by an invoice. */
  plan_invoice_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  updated_at: CreatedAt;
}

export type SubscriptionStatus = 'incomplete' | 'active' | 'past_due' | 'canceled';

/** A workspace's Stripe subscription to a plan, mirrored from Stripe's events (extensions-3.md 2). */
export interface BillingSubscriptionsTable {
  id: string;
  workspace_id: string;
  plan_id: string;
  status: SubscriptionStatus;
  /** The subscription's one item (an upgrade or downgrade changes its price). */
  item_id: string | null;
  current_period_end: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  cancel_at_period_end: Generated<boolean>;
  /** The plan the subscription is priced at now (its metadata's plan_id); a downgrade's until the next invoice is paid. */
  price_plan_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** When an invoice of it failed and none was paid since (the grace period's start). */
  past_due_since: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** When the grace period ended without a paid invoice and the workspace fell to free. */
  grace_ended_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

/** A subscription's invoice, recorded from Stripe's events. */
export interface BillingInvoicesTable {
  id: string;
  workspace_id: string;
  subscription_id: string | null;
  plan_id: string | null;
  number: string | null;
  status: string;
  amount_due: Generated<number>;
  amount_paid: Generated<number>;
  currency: string;
  period_start: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  period_end: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  hosted_invoice_url: string | null;
  created_at: Timestamp;
  updated_at: CreatedAt;
}

/** The Stripe Price of a plan at its amount and currency, made once and reused. */
export interface BillingPricesTable {
  plan_id: string;
  amount: number;
  currency: string;
  stripe_price_id: string;
  created_at: CreatedAt;
}

export type PaymentKind = 'checkout' | 'auto_recharge';
export type PaymentStatus = 'pending' | 'paid' | 'partially_refunded' | 'refunded' | 'failed' | 'mismatch';

export interface BillingPaymentsTable {
  id: string;
  workspace_id: string;
  kind: PaymentKind;
  pack_id: string;
  credits: number;
  amount: number;
  currency: string;
  status: Generated<PaymentStatus>;
  checkout_session_id: string | null;
  payment_intent_id: string | null;
  amount_refunded: Generated<number>;
  refunded_credits: Generated<number>;
  refund_shortfall_credits: Generated<number>;
  failure_message: string | null;
  /** Auto-recharge: attempts to create its PaymentIntent, when to try next, and the lease of the process trying. */
  attempts: Generated<number>;
  next_attempt_at: Timestamp | null;
  locked_until: Timestamp | null;
  created_at: CreatedAt;
  paid_at: Timestamp | null;
  updated_at: CreatedAt;
  /** The dispute (chargeback) of its charge: its ID and status, the credits it took back, and the part of its reversal already spent. */
  dispute_id: Generated<string | null>;
  dispute_status: Generated<DisputeStatus | null>;
  disputed_credits: Generated<number>;
  dispute_shortfall_credits: Generated<number>;
}

export type DisputeStatus = 'open' | 'won' | 'lost';

/** A refund or dispute event of a payment not granted yet, applied when the grant happens. */
export interface StripeHeldEventsTable {
  event_id: string;
  payment_intent_id: string;
  type: string;
  object: Json;
  received_at: CreatedAt;
  applied_at: Timestamp | null;
}

/** Each Stripe event ID, handled once. */
export interface StripeEventsTable {
  id: string;
  type: string;
  outcome: string;
  payment_id: string | null;
  received_at: CreatedAt;
}

export type Role = 'viewer' | 'member' | 'admin' | 'owner';

export interface UsersTable {
  id: string;
  email: string;
  display_name: string | null;
  avatar_url: ColumnType<string | null, string | null | undefined, string | null>;
  password_hash: string;
  /** The workspace the console opens after sign-in (null: the personal one). */
  default_workspace_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** When the email was verified; null until then (sign-up with EMAIL_VERIFICATION on). */
  email_verified_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** The TOTP secret, sealed (`packages/domain/src/sealing.ts`); set by setup, active once two_factor_enabled_at is set. */
  two_factor_secret: ColumnType<string | null, string | null | undefined, string | null>;
  two_factor_enabled_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** The last TOTP time step accepted: a code counts once. */
  two_factor_last_step: ColumnType<string | null, string | number | null | undefined, string | number | null>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface TwoFactorRecoveryCodesTable {
  user_id: string;
  code_hash: string;
  used_at: Timestamp | null;
  created_at: CreatedAt;
}

export type AuthTokenPurpose = 'verify_email' | 'reset_password';

export interface AuthTokensTable {
  id: string;
  user_id: string;
  purpose: AuthTokenPurpose;
  token_hash: string;
  /**
   * A verification link from a sign-up: the password hash of that sign-up, set when the link is
   * followed (so a sign-up by someone else first cannot keep the mailbox's owner out).
   */
  password_hash: ColumnType<string | null, string | null | undefined, string | null>;
  expires_at: ColumnType<Date, Date | string, Date | string>;
  used_at: Timestamp | null;
  created_at: CreatedAt;
}

export interface MailOutboxTable {
  id: string;
  recipient: string;
  /** Which template made it (`verify_email`, `reset_password`, `invitation`, ...). */
  template: string;
  subject: string;
  /** The rendered text and HTML, sealed; null once sent (the links in it are secrets). */
  body_sealed: string | null;
  status: Generated<'pending' | 'sent' | 'failed'>;
  attempts: Generated<number>;
  next_attempt_at: ColumnType<Date, Date | string | undefined, Date | string>;
  locked_until: Timestamp | null;
  last_error: string | null;
  created_at: CreatedAt;
  sent_at: Timestamp | null;
}

/** A password reset or verification resend waiting for the mail sender (migration 0031). */
export interface MailRequestsTable {
  id: string;
  kind: AuthTokenPurpose;
  /** The email as asked (normalised); whether an account has it is found out by the sender. */
  email: string;
  attempts: Generated<number>;
  next_attempt_at: ColumnType<Date, Date | string | undefined, Date | string>;
  created_at: CreatedAt;
}

export interface MembershipsTable {
  workspace_id: string;
  user_id: string;
  role: Role;
  created_at: CreatedAt;
}

export interface SessionsTable {
  id: string;
  user_id: string;
  token_hash: string;
  csrf_token: string;
  created_at: CreatedAt;
  last_seen_at: CreatedAt;
  expires_at: Timestamp;
  ended_at: Timestamp | null;
  ip: string | null;
  user_agent: string | null;
}

export interface InvitationsTable {
  id: string;
  workspace_id: string;
  email: string;
  role: Role;
  token_hash: string;
  invited_by: string | null;
  /** The API key that sent the invitation; null when a signed-in user did (invited_by), or for invitations older than this column. */
  invited_by_key_id: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: CreatedAt;
  expires_at: Timestamp;
  accepted_at: Timestamp | null;
  accepted_by: string | null;
  revoked_at: Timestamp | null;
}

export type ActorType = 'user' | 'api_key' | 'system';

export interface AuditEventsTable {
  id: string;
  workspace_id: string;
  action: string;
  actor_type: ActorType;
  actor_id: string | null;
  target_type: string | null;
  target_id: string | null;
  data: Json;
  ip: string | null;
  created_at: CreatedAt;
}

/** The record that a workspace's data was deleted (admin CLI delete-workspace): no foreign key, append-only. */
export interface WorkspaceDeletionsTable {
  id: string;
  workspace_id: string;
  action: Generated<string>;
  actor_type: ActorType;
  actor_id: string | null;
  /** Rows deleted, by table; Redis keys and queue entries removed. */
  data: Json;
  created_at: CreatedAt;
}

export interface CreditBalancesTable {
  workspace_id: string;
  period_start: ColumnType<string, string, string>;
  plan_used: Generated<number>;
  plan_reserved: Generated<number>;
  promo_balance: Generated<number>;
  promo_reserved: Generated<number>;
  promo_expires_at: Timestamp | null;
  purchased_balance: Generated<number>;
  purchased_reserved: Generated<number>;
  period_promo_spent: Generated<number>;
  period_purchased_spent: Generated<number>;
  units_used: Generated<number>;
  units_reserved: Generated<number>;
  lifetime_purchased: Generated<number>;
  lifetime_spent: Generated<number>;
  /** Credits reserved or settled in this period (month), released ones excluded; reset with the period. */
  month_spent: Generated<number>;
  /** `billing.spend_cap_reached` was sent for the workspace this period. */
  cap_alerted: Generated<boolean>;
  updated_at: CreatedAt;
}

export type ReservationStatus = 'held' | 'settled' | 'released';

export interface CreditReservationsTable {
  id: string;
  workspace_id: string;
  job_id: string;
  plan_amount: number;
  promo_amount: number;
  purchased_amount: number;
  units: number;
  status: ReservationStatus;
  settled_credits: number | null;
  created_at: CreatedAt;
  closed_at: Timestamp | null;
  /** The API key whose submission made it (its month's spend); null for sessions and the system. */
  api_key_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export type LedgerEntryType = 'plan_allowance' | 'grant' | 'reserve' | 'release' | 'settle' | 'expire' | 'purchase' | 'refund';
export type CreditBucket = 'plan' | 'promotional' | 'purchased';

export interface CreditLedgerTable {
  id: Generated<number>;
  workspace_id: string;
  entry_type: LedgerEntryType;
  bucket: CreditBucket | null;
  credits: number;
  plan_credits: Generated<number>;
  promo_credits: Generated<number>;
  purchased_credits: Generated<number>;
  units: Generated<number>;
  reservation_id: string | null;
  job_id: string | null;
  period_start: string;
  note: string | null;
  /** The payment a purchase or refund came from. */
  payment_id: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: CreatedAt;
}

export type JobStatus = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';

export interface JobsTable {
  id: string;
  workspace_id: string;
  batch_id: string | null;
  batch_position: number | null;
  schedule_id: string | null;
  platform: string;
  operation: string;
  target: string;
  normalized_target: string;
  request_key: string;
  requested_limit: number;
  include_posts: Generated<number>;
  status: JobStatus;
  attempts: Generated<number>;
  max_attempts: number;
  progress_stage: Generated<string>;
  progress_message: string | null;
  progress_current: Generated<number>;
  progress_total: number | null;
  heartbeat_at: Timestamp | null;
  next_attempt_at: Timestamp | null;
  cancel_requested_at: Timestamp | null;
  result_count: number | null;
  billed_units: Generated<number>;
  credit_rate: number;
  results_per_credit: number;
  base_credits: number;
  /** The rates of bundled posts (include_posts), recorded at admission; null without a bundle. */
  bundle_credit_rate: ColumnType<number | null, number | null | undefined, number | null>;
  bundle_results_per_credit: ColumnType<number | null, number | null | undefined, number | null>;
  bundle_base_credits: ColumnType<number | null, number | null | undefined, number | null>;
  reserved_credits: Generated<number>;
  billed_credits: Generated<number>;
  error: Json | null;
  cached: Generated<boolean>;
  source_job_id: string | null;
  lease_token: string | null;
  checkpoint_cursor: string | null;
  checkpoint_pages: Generated<number>;
  /** The X-Request-ID of the request that admitted the job (a schedule run's ID for an occurrence). */
  request_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** Dispatched by a new_only schedule: completion delivers and bills only items not delivered before. */
  new_only: Generated<boolean>;
  /** The shared queue entry of the job's first attempt (null: an entry of its own). */
  queue_entry: ColumnType<string | null, string | null | undefined, string | null>;
  /** The deployment (DEPLOYMENT_ID) that admitted the job; null before deployments were recorded. */
  deployment: ColumnType<string | null, string | null | undefined, string | null>;
  /** When the job's queue entry was last added; the epoch marks an add that failed. */
  enqueued_at: ColumnType<Date, Date | string | undefined, Date | string>;
  /** The priority of the job's queue entries: its rank among its workspace's active jobs at admission. */
  queue_priority: ColumnType<number, number | undefined, number>;
  /** Set by the retention purge once the job finished more than RESULT_RETENTION_DAYS ago: its result pages are gone. */
  result_expired: Generated<boolean>;
  created_at: CreatedAt;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
  /** Delivery to a bucket (migration 0027): all null without a destination. */
  destination_id: ColumnType<string | null, string | null | undefined, string | null>;
  delivery_status: ColumnType<DeliveryStatus | null, DeliveryStatus | null | undefined, DeliveryStatus | null>;
  /** The object key, `{prefix}{id}.{ext}`, fixed at admission. */
  delivery_key: ColumnType<string | null, string | null | undefined, string | null>;
  delivery_attempts: Generated<number>;
  delivery_error: ColumnType<string | null, string | null | undefined, string | null>;
  delivered_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  delivery_next_attempt_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  delivery_lease_until: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export interface JobResultPagesTable {
  job_id: string;
  page_no: number;
  item_count: number;
  /** The page's items, or null when they are an object of the result store (object_key). */
  items: ColumnType<unknown, string | null, string | null>;
  object_key: ColumnType<string | null, string | null | undefined, string | null>;
  /** Where the page's gzip member starts in a shared object; null when the object is the page. */
  object_offset: ColumnType<number | null, number | null | undefined, number | null>;
  stored_bytes: ColumnType<number | null, number | null | undefined, number | null>;
  created_at: CreatedAt;
}

/** One live source an attempt tried (migration 0028): written for live attempts only. */
export interface JobAttemptSourcesTable {
  job_id: string;
  attempt: number;
  seq: number;
  source: string;
  provider: string;
  outcome: string;
  error_code: string | null;
  created_at: CreatedAt;
}

/** The health of one live adapter, shared by every worker (migration 0028). */
export interface SourceHealthTable {
  provider: string;
  source: string;
  last_success_at: Date | null;
  last_failure_at: Date | null;
  auth_failures: Generated<number>;
  down_since: Date | null;
  quota_unit: string | null;
  quota_remaining: number | null;
  quota_limit: number | null;
  /** The Pacific day `quota_used` counts (YYYY-MM-DD). */
  quota_day: string | null;
  quota_used: Generated<number>;
  updated_at: Generated<Date>;
}

export interface BatchesTable {
  id: string;
  workspace_id: string;
  platform: string;
  operation: string;
  requested_limit: number;
  include_posts: Generated<number>;
  target_count: number;
  cancel_requested_at: Timestamp | null;
  schedule_id: string | null;
  created_at: CreatedAt;
  /** Delivery to a bucket (migration 0027): all null without a destination. */
  destination_id: ColumnType<string | null, string | null | undefined, string | null>;
  delivery_status: ColumnType<DeliveryStatus | null, DeliveryStatus | null | undefined, DeliveryStatus | null>;
  /** The object key, `{prefix}{id}.{ext}`, fixed at admission. */
  delivery_key: ColumnType<string | null, string | null | undefined, string | null>;
  delivery_attempts: Generated<number>;
  delivery_error: ColumnType<string | null, string | null | undefined, string | null>;
  delivered_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  delivery_next_attempt_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  delivery_lease_until: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export type ScheduleStatus = 'active' | 'paused' | 'completed';

export interface SchedulesTable {
  id: string;
  workspace_id: string;
  name: string;
  platform: string;
  operation: string;
  targets: ColumnType<string[], string, string>;
  requested_limit: number;
  include_posts: Generated<number>;
  frequency: 'once' | 'daily' | 'weekly' | 'monthly';
  timezone: string;
  starts_at: Timestamp;
  starts_at_text: string;
  next_run_at: Timestamp | null;
  last_run_at: Timestamp | null;
  status: ScheduleStatus;
  overlap_policy: Generated<string>;
  /** all: every occurrence delivers everything; new_only: only items no earlier occurrence delivered. */
  delivery: Generated<'all' | 'new_only'>;
  /** The destination every occurrence's job or batch is delivered to; null: none. */
  destination_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** Who made the schedule (extensions-3.md 1): a user or an API key; null for schedules made before it was recorded. */
  created_by_kind: ColumnType<CreatorKind | null, CreatorKind | null | undefined, CreatorKind | null>;
  created_by_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** Why the service paused it (its creator's key was revoked or its creator left); null otherwise. */
  paused_reason: ColumnType<PausedReason | null, PausedReason | null | undefined, PausedReason | null>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
  deleted_at: Timestamp | null;
}

/** Who made a schedule (or a monitor): a signed-in user or an API key (an OAuth grant is a key). */
export type CreatorKind = 'user' | 'key';
/** Why the service, not a person, paused a schedule (or a monitor). */
export type PausedReason = 'creator_revoked';

/** The identity of a feed a new_only schedule monitors. */
export interface DeliverySetsTable {
  id: Generated<number>;
  schedule_id: string;
  platform: string;
  operation: string;
  target: string;
}

/** Items already delivered from a feed, by a 64-bit hash of their identity. */
export interface DeliveredItemsTable {
  set_id: number;
  /** A bigint, kept as text so no digit is lost. */
  item_hash: string;
}

export type ScheduleRunStatus = 'queued' | 'skipped_credits' | 'skipped_overlap' | 'failed';

export interface ScheduleRunsTable {
  id: string;
  schedule_id: string;
  workspace_id: string;
  trigger: 'scheduled' | 'manual';
  scheduled_for: Timestamp;
  status: ScheduleRunStatus;
  job_id: string | null;
  batch_id: string | null;
  error: Json | null;
  created_at: CreatedAt;
  dispatched_at: Timestamp | null;
}

export type MonitorStatus = 'active' | 'paused';
export type MonitorRunStatus = 'queued' | 'running' | 'completed' | 'failed' | 'skipped_credits';

/** A monitor (extensions-3.md section 3): one operation over targets, on a recurrence. */
export interface MonitorsTable {
  id: string;
  workspace_id: string;
  name: string;
  platform: string;
  operation: string;
  targets: ColumnType<string[], string, string>;
  requested_limit: number;
  frequency: 'hourly' | 'daily' | 'weekly';
  /** HH:MM in the monitor's zone; null for hourly at the top of the hour. */
  time_of_day: string | null;
  /** monday … sunday, weekly only. */
  day_of_week: string | null;
  timezone: string;
  status: MonitorStatus;
  paused_reason: string | null;
  alerts: ColumnType<unknown[], string | undefined, string>;
  destination_id: string | null;
  created_by_kind: 'user' | 'key' | null;
  created_by_id: string | null;
  next_run_at: Timestamp | null;
  last_run_at: Timestamp | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
  deleted_at: Timestamp | null;
}

/** One occurrence of a monitor: its batches, dispatched as the active-job cap leaves room. */
export interface MonitorRunsTable {
  id: string;
  monitor_id: string;
  workspace_id: string;
  trigger: 'scheduled' | 'manual';
  scheduled_for: Timestamp;
  /** The monitor's targets and limit when the run was made: its batches are cut from them. */
  targets: ColumnType<string[], string, string>;
  requested_limit: number;
  status: MonitorRunStatus;
  batch_ids: ColumnType<string[], string | undefined, string>;
  /** The first chunk of at most 100 targets not dispatched yet. */
  next_chunk: Generated<number>;
  error: Json | null;
  observations: Generated<number>;
  changes: Generated<number>;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
  created_at: CreatedAt;
}

/** A point of a monitor's series (partitioned by month on `at`); item_id '' for a profile's. */
export interface MonitorPointsTable {
  monitor_id: string;
  workspace_id: string;
  target: string;
  item_id: string;
  metric: string;
  at: Timestamp;
  value: number;
  run_id: string;
}

/** Each series' last point. */
export interface MonitorSeriesTable {
  monitor_id: string;
  workspace_id: string;
  target: string;
  item_id: string;
  metric: string;
  value: number;
  at: Timestamp;
}

/** A change a completed run found (metric_changed, field_changed, new_item). */
export interface MonitorChangesTable {
  id: string;
  monitor_id: string;
  workspace_id: string;
  run_id: string;
  target: string;
  item_id: string | null;
  kind: 'metric_changed' | 'field_changed' | 'new_item';
  field: string | null;
  before: unknown;
  after: unknown;
  change_pct: number | null;
  at: Timestamp;
}

/** A target's last seen profile field. */
export interface MonitorFieldsTable {
  monitor_id: string;
  workspace_id: string;
  target: string;
  field: string;
  value: unknown;
}

/** An item a target has listed in a run. */
export interface MonitorItemsTable {
  monitor_id: string;
  workspace_id: string;
  target: string;
  item_id: string;
}

export interface IdempotencyKeysTable {
  workspace_id: string;
  endpoint: string;
  key: string;
  request_hash: string;
  resource_type: string;
  resource_id: string;
  created_at: CreatedAt;
  expires_at: Timestamp;
}

/** A workspace's webhook endpoint (extensions.md 5). */
export interface WebhooksTable {
  id: string;
  workspace_id: string;
  url: string;
  description: string | null;
  /** Event types it takes; `*` takes all. */
  events: ColumnType<string[], string[], string[]>;
  enabled: Generated<boolean>;
  /** `whsec_` + base64 of 32 random bytes: signs every message. */
  secret: string;
  /** The secret before the last rotation: signs beside `secret` until previous_secret_expires_at. */
  previous_secret: string | null;
  previous_secret_expires_at: Timestamp | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

/** The outbox: an event, written in the transaction of the change it tells of. */
export interface WebhookEventsTable {
  /** `evt_…`: the webhook-id header of every delivery of the event. */
  id: string;
  workspace_id: string;
  /** An event type, or `batch.child_ended` (internal: the dispatcher decides whether the batch ended). */
  type: string;
  /** The job, batch or schedule run the event is about; null for a test send. */
  subject_id: string | null;
  /** Set for a test send: the one webhook it goes to. */
  webhook_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** The message body, rendered once by the dispatcher (or at a test send), the same on every attempt. */
  body: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: CreatedAt;
  dispatched_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

/** A workspace's bucket that jobs and batches deliver their export to (extensions-2.md 5). */
export interface DestinationsTable {
  id: string;
  workspace_id: string;
  name: string;
  type: 's3';
  bucket: string;
  prefix: Generated<string>;
  region: string;
  endpoint: string | null;
  force_path_style: Generated<boolean>;
  access_key_id: string;
  /** Sealed (`packages/domain/src/sealing.ts`); never in clear. */
  secret_access_key: string;
  format: 'json' | 'ndjson' | 'csv' | 'xlsx';
  created_at: CreatedAt;
}

/** A job's or batch's delivery to its destination. */
export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** One event to one webhook, attempted on the retry schedule. */
export interface WebhookDeliveriesTable {
  id: string;
  webhook_id: string;
  event_id: string;
  workspace_id: string;
  status: Generated<WebhookDeliveryStatus>;
  attempts: Generated<number>;
  response_status: ColumnType<number | null, number | null | undefined, number | null>;
  error: ColumnType<string | null, string | null | undefined, string | null>;
  next_attempt_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** The attempt sending now holds the delivery until lease_until. */
  lease_token: ColumnType<string | null, string | null | undefined, string | null>;
  lease_until: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  created_at: CreatedAt;
  delivered_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export interface Database {
  workspaces: WorkspacesTable;
  api_keys: ApiKeysTable;
  api_key_spend: ApiKeySpendTable;
  oauth_clients: OAuthClientsTable;
  oauth_codes: OAuthCodesTable;
  oauth_tokens: OAuthTokensTable;
  billing_customers: BillingCustomersTable;
  billing_payments: BillingPaymentsTable;
  stripe_events: StripeEventsTable;
  workspace_plans: WorkspacePlansTable;
  billing_subscriptions: BillingSubscriptionsTable;
  billing_invoices: BillingInvoicesTable;
  billing_prices: BillingPricesTable;
  stripe_held_events: StripeHeldEventsTable;
  credit_balances: CreditBalancesTable;
  credit_reservations: CreditReservationsTable;
  credit_ledger: CreditLedgerTable;
  jobs: JobsTable;
  job_result_pages: JobResultPagesTable;
  job_attempt_sources: JobAttemptSourcesTable;
  source_health: SourceHealthTable;
  batches: BatchesTable;
  schedules: SchedulesTable;
  schedule_runs: ScheduleRunsTable;
  monitors: MonitorsTable;
  monitor_runs: MonitorRunsTable;
  monitor_points: MonitorPointsTable;
  monitor_series: MonitorSeriesTable;
  monitor_changes: MonitorChangesTable;
  monitor_fields: MonitorFieldsTable;
  monitor_items: MonitorItemsTable;
  delivery_sets: DeliverySetsTable;
  delivered_items: DeliveredItemsTable;
  idempotency_keys: IdempotencyKeysTable;
  users: UsersTable;
  memberships: MembershipsTable;
  sessions: SessionsTable;
  invitations: InvitationsTable;
  audit_events: AuditEventsTable;
  workspace_deletions: WorkspaceDeletionsTable;
  destinations: DestinationsTable;
  webhooks: WebhooksTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  two_factor_recovery_codes: TwoFactorRecoveryCodesTable;
  auth_tokens: AuthTokensTable;
  mail_outbox: MailOutboxTable;
  mail_requests: MailRequestsTable;
}

export type WorkspaceRow = Selectable<WorkspacesTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type OAuthClientRow = Selectable<OAuthClientsTable>;
export type OAuthCodeRow = Selectable<OAuthCodesTable>;
export type OAuthTokenRow = Selectable<OAuthTokensTable>;
export type UserRow = Selectable<UsersTable>;
export type MembershipRow = Selectable<MembershipsTable>;
export type SessionRow = Selectable<SessionsTable>;
export type InvitationRow = Selectable<InvitationsTable>;
export type AuditEventRow = Selectable<AuditEventsTable>;
export type CreditBalanceRow = Selectable<CreditBalancesTable>;
export type ReservationRow = Selectable<CreditReservationsTable>;
export type JobRow = Selectable<JobsTable>;
export type NewJob = Insertable<JobsTable>;
export type JobUpdate = Updateable<JobsTable>;
export type BatchRow = Selectable<BatchesTable>;
export type ScheduleRow = Selectable<SchedulesTable>;
export type ScheduleRunRow = Selectable<ScheduleRunsTable>;
export type MonitorRow = Selectable<MonitorsTable>;
export type MonitorRunRow = Selectable<MonitorRunsTable>;
export type WebhookRow = Selectable<WebhooksTable>;
export type DestinationRow = Selectable<DestinationsTable>;
export type AuthTokenRow = Selectable<AuthTokensTable>;
export type MailOutboxRow = Selectable<MailOutboxTable>;
export type WebhookEventRow = Selectable<WebhookEventsTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
export type BillingPaymentRow = Selectable<BillingPaymentsTable>;
export type BillingCustomerRow = Selectable<BillingCustomersTable>;
export type BillingSubscriptionRow = Selectable<BillingSubscriptionsTable>;
export type BillingInvoiceRow = Selectable<BillingInvoicesTable>;
export type ApiKeySpendRow = Selectable<ApiKeySpendTable>;
