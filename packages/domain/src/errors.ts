import type { components } from '@sdx/contract';

/**
 * The closed set of service error identifiers and their HTTP status. Every service error the
 * API answers is an ApiError; one renderer turns it into {"detail": {"error": code, "message", ...}}.
 * The set is openapi.yaml's ServiceErrorCode enum, no more and no less (checked by `satisfies`).
 */
export const ERROR_STATUS = {
  invalid_request: 400,
  missing_authentication: 401,
  invalid_api_key: 401,
  insufficient_credits: 402,
  workspace_forbidden: 403,
  not_found: 404,
  job_not_found: 404,
  batch_not_found: 404,
  schedule_not_found: 404,
  monitor_not_found: 404,
  method_not_allowed: 405,
  idempotency_key_conflict: 409,
  results_not_ready: 409,
  unsupported_operation: 422,
  operation_not_monitorable: 422,
  duplicate_batch_target: 422,
  invalid_target: 422,
  rate_limit_exceeded: 429,
  concurrent_job_limit_exceeded: 429,
  // Users, teams and keys (extensions.md 1-3).
  invalid_credentials: 401,
  forbidden: 403,
  csrf_failed: 403,
  signup_disabled: 403,
  invitation_email_mismatch: 403,
  workspace_not_found: 404,
  key_not_found: 404,
  member_not_found: 404,
  invitation_not_found: 404,
  // Webhooks (extensions.md 5).
  webhook_not_found: 404,
  delivery_not_found: 404,
  invalid_webhook_url: 422,
  // Destinations (extensions-2.md 5).
  destination_not_found: 404,
  destination_unreachable: 422,
  email_taken: 409,
  last_owner: 409,
  personal_workspace: 409,
  already_member: 409,
  invitation_invalid: 410,
  results_expired: 410,
  concurrent_read_limit_exceeded: 429,
  internal_error: 500,
  extraction_failed: 502,
  rate_limiter_unavailable: 503,
  service_unavailable: 503,
  // Trust (extensions-2.md 2).
  otp_required: 401,
  invalid_otp: 401,
  email_not_verified: 403,
  two_factor_required: 403,
  workspace_limit_reached: 403,
  two_factor_enabled: 409,
  two_factor_not_set_up: 409,
  verification_invalid: 410,
  reset_token_invalid: 410,
  webhook_limit_reached: 422,
  stream_limit_exceeded: 429,
  mail_unavailable: 503,
  // Billing (extensions-2.md 1). spend_cap_reached carries scope, cap and spent.
  billing_unavailable: 503,
  unknown_pack: 422,
  invalid_threshold: 422,
  invalid_signature: 400,
  payment_method_required: 409,
  spend_cap_reached: 402,
  // Monthly plans (extensions-3.md 2).
  unknown_plan: 422,
  subscription_not_found: 404,
} as const satisfies Record<components['schemas']['ServiceErrorCode'], number>;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly fields: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
    /** Only for an identifier answered with two statuses (two_factor_required: 403, or 409 when the owner turns the rule on without 2FA). */
    status?: number,
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = status ?? ERROR_STATUS[code];
  }
}

/**
 * A request-validation failure found by domain code (for example a limit above the operation's
 * maximum), rendered as the HTTPValidationError body exactly like schema failures.
 */
export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
}

export class RequestValidationError extends Error {
  constructor(readonly issues: ValidationIssue[]) {
    super(issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; '));
    this.name = 'RequestValidationError';
  }
}
