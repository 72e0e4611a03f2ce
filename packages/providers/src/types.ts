import type { OperationSpec, Platform } from '@sdx/catalog';
import type { Item } from '@sdx/contract';

/**
 * Normalized result items, exactly as openapi.yaml documents them (components/schemas/*Item):
 * the contract is their one definition, and the providers produce what it promises. Every item
 * carries `kind`, `platform`, `username` and `caption` (api-v1.md 2.4); the rest depends on the
 * kind. Upstream IDs are always strings.
 */
export type {
  AdItem,
  AdvertiserItem,
  AnalyticsItem,
  CommentItem,
  HighlightItem,
  Item,
  Metrics,
  PlaylistItem,
  PostItem,
  ProfileItem,
  StoryItem,
  TranscriptItem,
  TranscriptSegment,
} from '@sdx/contract';

/** Where an item came from (the item field `source`): the sandbox, a platform's official API, or a data vendor. */
export type ItemSource = 'sandbox' | 'official' | 'vendor';

/** The fields every item carries, whatever its kind. */
export type ItemBase = Pick<Item, 'kind' | 'platform' | 'id' | 'username' | 'caption' | 'url' | 'published_at'>;

/** What the worker asks a provider to do. */
export interface ExtractionRequest {
  platform: Platform;
  operation: string;
  spec: OperationSpec;
  /** Normalized target (see @sdx/catalog normalizeTarget); a query as the user wrote it (providerTarget). */
  target: string;
  /** Effective limit: min(requested, max_results). */
  limit: number;
  /** Posts bundled with a profile (0 when not a bundle). */
  includePosts: number;
  /** 1-based attempt number of the job. */
  attempt: number;
  /** Resume point saved by a previous attempt (the `cursor` of the last saved page). */
  resumeCursor: string | null;
  signal: AbortSignal;
  /** Told of each live source the attempt tried and how it ended (the sandbox tells nothing). */
  onSource?: (report: SourceReport) => void;
}

/** One live source tried by an attempt: it served the attempt, or failed with `error_code`. */
export interface SourceReport {
  source: Exclude<ItemSource, 'sandbox'>;
  /** The adapter, e.g. `youtube-data-api`. */
  provider: string;
  outcome: 'served' | 'failed';
  error_code: ProviderErrorCode | null;
  /** The source's quota as this attempt saw it, where the source reports or publishes it. */
  quota: QuotaReading | null;
}

/** An upstream's quota as one attempt saw it: what its requests cost, and what the last answer said was left. */
export interface QuotaReading {
  /** What the quota counts, e.g. `units a day`, `credits`. */
  unit: string;
  /** What the attempt's requests cost (counted locally where the platform publishes costs; else 0). */
  used: number;
  /** What the last answer said is left; null when none said. */
  remaining: number | null;
  /** The quota of a period where the platform publishes it and states nothing left (YouTube: 10,000 units a day); else null. */
  limit: number | null;
}

/** One page of results. The worker saves each page with its cursor before asking for the next. */
export interface Page {
  items: Item[];
  /** Where the next page starts; null when this was the last page. */
  cursor: string | null;
  /** Expected total when the upstream says so. */
  total?: number | null;
}

/**
 * A provider extracts one operation. `extract` yields pages until it has the limit
 * or the upstream has no more. For a profile bundle, the first page carries the
 * profile item and later pages the posts (kind post/video).
 */
export interface Provider {
  readonly name: string;
  /** What the provider's items come from (absent: not stated). */
  readonly source?: ItemSource;
  supports(platform: Platform, operation: string): boolean;
  extract(request: ExtractionRequest): AsyncIterable<Page>;
  /** The live sources behind it, in the order they are tried (absent for the sandbox). */
  readonly sources?: ReadonlyArray<{ provider: string; source: Exclude<ItemSource, 'sandbox'> }>;
}

export type ProviderErrorCode =
  | 'target_not_found'
  | 'target_private'
  | 'invalid_target'
  | 'upstream_unavailable'
  | 'rate_limited'
  | 'quota_exceeded'
  | 'upstream_auth'
  | 'internal_error';

/**
 * The one error type providers throw. `retryable` decides whether the job goes back to
 * queued or fails; `retryAfterMs` (rate limits, quota resets) sets the earliest retry.
 */
export class ProviderError extends Error {
  constructor(
    readonly code: ProviderErrorCode,
    message: string,
    readonly retryable: boolean,
    readonly retryAfterMs: number | null = null,
    readonly context: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ProviderError';
  }

  static notFound(message: string, context: Record<string, unknown> = {}): ProviderError {
    return new ProviderError('target_not_found', message, false, null, context);
  }
  static private(message: string, context: Record<string, unknown> = {}): ProviderError {
    return new ProviderError('target_private', message, false, null, context);
  }
  static invalid(message: string, context: Record<string, unknown> = {}): ProviderError {
    return new ProviderError('invalid_target', message, false, null, context);
  }
  static unavailable(message: string, retryAfterMs: number | null = null, context: Record<string, unknown> = {}): ProviderError {
    return new ProviderError('upstream_unavailable', message, true, retryAfterMs, context);
  }
  static rateLimited(message: string, retryAfterMs: number | null, context: Record<string, unknown> = {}): ProviderError {
    return new ProviderError('rate_limited', message, true, retryAfterMs, context);
  }
}
