import type { ItemKind, OperationSpec, Platform } from '@sdx/catalog';

/**
 * Normalized result items. Every item carries `kind`, `platform`, `username` and `caption`
 * (api-v1.md 2.4); the rest depends on the kind. Upstream IDs are always strings.
 * openapi.yaml documents the same shapes (components/schemas/*Item).
 */
export interface ItemBase {
  kind: ItemKind;
  platform: Platform;
  id: string;
  username: string | null;
  caption: string | null;
  url: string | null;
  published_at: string | null;
}

export interface ProfileItem extends ItemBase {
  kind: 'profile';
  display_name: string | null;
  bio: string | null;
  avatar_url: string | null;
  verified: boolean;
  private: boolean;
  followers_count: number | null;
  following_count: number | null;
  posts_count: number | null;
}

export interface Metrics {
  views: number | null;
  likes: number | null;
  comments: number | null;
  shares: number | null;
}

export interface PostItem extends ItemBase {
  kind: 'post' | 'video';
  title: string | null;
  media_type: string | null;
  duration_seconds: number | null;
  hashtags: string[];
  collaborator_usernames: string[];
  metrics: Metrics;
}

export interface CommentItem extends ItemBase {
  kind: 'comment';
  /** The commented content's ID. */
  parent_id: string | null;
  /** Pass as the target of facebook comment_replies. */
  comment_url: string | null;
  likes: number | null;
  reply_count: number | null;
}

export interface HighlightItem extends ItemBase {
  kind: 'highlight';
  title: string | null;
  cover_url: string | null;
  items_count: number | null;
}

export interface StoryItem extends ItemBase {
  kind: 'story';
  media_type: string | null;
  media_url: string | null;
  expires_at: string | null;
}

export interface TranscriptSegment {
  start: number;
  end: number;
  text: string;
}

export interface TranscriptItem extends ItemBase {
  kind: 'transcript';
  language: string | null;
  text: string;
  segments: TranscriptSegment[];
}

export interface PlaylistItem extends ItemBase {
  kind: 'playlist';
  title: string | null;
  items_count: number | null;
}

export interface AdItem extends ItemBase {
  kind: 'ad';
  advertiser_id: string | null;
  advertiser_name: string | null;
  first_shown_at: string | null;
  last_shown_at: string | null;
  status: string | null;
  body: string | null;
  media_urls: string[];
  platforms: string[];
  countries: string[];
  spend: string | null;
  impressions: string | null;
}

export interface AdvertiserItem extends ItemBase {
  kind: 'advertiser';
  name: string;
  page_id: string;
  category: string | null;
  ads_count: number | null;
}

export interface AnalyticsItem extends ItemBase {
  kind: 'analytics';
  followers_count: number | null;
  posts_count: number | null;
  average_likes: number | null;
  average_comments: number | null;
  engagement_rate: number | null;
  posting_frequency_per_week: number | null;
}

export type Item =
  | ProfileItem
  | PostItem
  | CommentItem
  | HighlightItem
  | StoryItem
  | TranscriptItem
  | PlaylistItem
  | AdItem
  | AdvertiserItem
  | AnalyticsItem;

/** What the worker asks a provider to do. */
export interface ExtractionRequest {
  platform: Platform;
  operation: string;
  spec: OperationSpec;
  /** Normalized target (see @sdx/catalog normalizeTarget). */
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
  supports(platform: Platform, operation: string): boolean;
  extract(request: ExtractionRequest): AsyncIterable<Page>;
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
