/**
 * The capability catalog of api-v1.md 2.3, encoded as decisions.md says.
 * This module is the one place that knows platforms, operations, maxima and prices;
 * validation, pricing and GET /v1/platforms all read it.
 */

export const PLATFORMS = ['instagram', 'tiktok', 'youtube', 'twitter', 'facebook'] as const;
export type Platform = (typeof PLATFORMS)[number];
export const DEFAULT_PLATFORM: Platform = 'instagram';

export const PLATFORM_LABELS: Record<Platform, string> = {
  instagram: 'Instagram',
  tiktok: 'TikTok',
  youtube: 'YouTube',
  twitter: 'X (Twitter)',
  facebook: 'Facebook',
};

/** What a target of an operation is, which decides how it is validated and normalized. */
export type TargetKind =
  | 'username' // a handle of the network
  | 'content' // a content URL or the network's ID/shortcode
  | 'query' // free-text search query
  | 'hashtag'
  | 'country' // two-letter country code
  | 'channel' // youtube handle, channel ID or URL
  | 'page' // facebook handle, numeric ID or URL
  | 'highlight' // instagram highlight ID or URL
  | 'playlist' // youtube playlist ID or URL
  | 'ad' // ad ID or URL
  | 'advertiser' // facebook advertiser page_id
  | 'comment_url'; // a comment_url taken from a comments result

/** The kind of item an operation returns; every item carries `kind`. */
export type ItemKind =
  'profile' | 'post' | 'video' | 'comment' | 'highlight' | 'story' | 'transcript' | 'playlist' | 'ad' | 'advertiser' | 'analytics';

export interface OperationSpec {
  operation: string;
  target: TargetKind;
  itemKind: ItemKind;
  max_results: number;
  credits_per_result: number;
  results_per_credit: number;
  base_credits: number;
}

const per = (operation: string, target: TargetKind, itemKind: ItemKind, max: number, credits: number): OperationSpec => ({
  operation,
  target,
  itemKind,
  max_results: max,
  credits_per_result: credits,
  results_per_credit: 1,
  base_credits: 0,
});

const flat = (operation: string, target: TargetKind, itemKind: ItemKind, max: number, credits: number): OperationSpec => ({
  operation,
  target,
  itemKind,
  max_results: max,
  credits_per_result: 0,
  results_per_credit: 1,
  base_credits: credits,
});

export const CATALOG: Record<Platform, OperationSpec[]> = {
  instagram: [
    per('profile', 'username', 'profile', 1, 1),
    per('post', 'content', 'post', 1, 1),
    per('followers', 'username', 'profile', 5000, 2),
    per('following', 'username', 'profile', 5000, 2),
    per('posts', 'username', 'post', 100, 2),
    per('reels', 'username', 'post', 100, 2),
    per('comments', 'content', 'comment', 200, 2),
    flat('highlights', 'username', 'highlight', 50, 10),
    flat('highlight_items', 'highlight', 'story', 100, 10),
    flat('stories', 'username', 'story', 50, 10),
    per('hashtag', 'hashtag', 'post', 50, 2),
    per('search_users', 'query', 'profile', 50, 2),
    per('tagged', 'username', 'post', 50, 2),
    per('transcript', 'content', 'transcript', 1, 20),
  ],
  tiktok: [
    per('profile', 'username', 'profile', 1, 1),
    per('posts', 'username', 'video', 200, 2),
    per('post', 'content', 'video', 1, 1),
    per('comments', 'content', 'comment', 200, 2),
    per('hashtag', 'hashtag', 'video', 200, 2),
    per('search', 'query', 'video', 200, 2),
    per('search_users', 'query', 'profile', 200, 2),
    per('trending', 'country', 'video', 200, 2),
    per('transcript', 'content', 'transcript', 1, 20),
    flat('adlibrary_search', 'query', 'ad', 100, 10),
    per('adlibrary_ad', 'ad', 'ad', 1, 10),
  ],
  youtube: [
    per('profile', 'channel', 'profile', 1, 1),
    per('posts', 'channel', 'video', 200, 1),
    per('video', 'content', 'video', 1, 1),
    per('comments', 'content', 'comment', 100, 1),
    per('search', 'query', 'video', 50, 1),
    per('transcript', 'content', 'transcript', 1, 10),
    per('shorts', 'channel', 'video', 200, 1),
    per('trending', 'country', 'video', 200, 1),
    per('playlist', 'playlist', 'playlist', 1, 1),
    per('playlist_items', 'playlist', 'video', 500, 1),
  ],
  twitter: [
    per('profile', 'username', 'profile', 1, 1),
    per('followers', 'username', 'profile', 25000, 2),
    per('following', 'username', 'profile', 25000, 2),
    per('posts', 'username', 'post', 100, 2),
    per('post', 'content', 'post', 1, 1),
    per('search', 'query', 'post', 100, 2),
    per('transcript', 'content', 'transcript', 1, 20),
  ],
  facebook: [
    per('profile', 'page', 'profile', 1, 1),
    per('posts', 'page', 'post', 200, 2),
    per('reels', 'page', 'video', 200, 2),
    per('post', 'content', 'post', 1, 1),
    per('comments', 'content', 'comment', 200, 2),
    per('comment_replies', 'comment_url', 'comment', 200, 2),
    per('adlibrary_companies', 'query', 'advertiser', 100, 3),
    per('adlibrary_company_ads', 'advertiser', 'ad', 200, 3),
    per('adlibrary_search', 'query', 'ad', 200, 3),
    per('adlibrary_ad', 'ad', 'ad', 1, 3),
    per('adlibrary_ad_transcript', 'ad', 'transcript', 1, 20),
    per('transcript', 'content', 'transcript', 1, 20),
    per('profile_analytics', 'page', 'analytics', 1, 5),
  ],
};

/** Every operation name of the catalog: the request `operation` enum (27 names). */
export const OPERATION_NAMES: string[] = Array.from(new Set(PLATFORMS.flatMap((p) => CATALOG[p].map((o) => o.operation)))).sort();

export function isPlatform(value: string): value is Platform {
  return (PLATFORMS as readonly string[]).includes(value);
}

export function findOperation(platform: string, operation: string): OperationSpec | undefined {
  if (!isPlatform(platform)) return undefined;
  return CATALOG[platform].find((o) => o.operation === operation);
}

/** Cost of n delivered results: 0 when n = 0, else base + per-result * ceil(n / results_per_credit). */
export function costOf(spec: Pick<OperationSpec, 'base_credits' | 'credits_per_result' | 'results_per_credit'>, n: number): number {
  if (n <= 0) return 0;
  return spec.base_credits + spec.credits_per_result * Math.ceil(n / spec.results_per_credit);
}

/** Operations whose `include_posts` bundles posts into the result ({profile, posts}). */
export function supportsBundle(spec: OperationSpec): boolean {
  return spec.operation === 'profile';
}

/** The spec whose rate prices bundled posts of a profile: the platform's `posts` operation. */
export function bundlePostsSpec(platform: Platform): OperationSpec | undefined {
  return CATALOG[platform].find((o) => o.operation === 'posts');
}

/**
 * The list operations of a target's own posts or videos that a monitor may follow (extensions-3.md
 * section 3); with every platform's `profile`, the monitorable operations.
 */
const MONITORABLE_LISTS: Readonly<Record<Platform, readonly string[]>> = {
  instagram: ['posts', 'reels'],
  tiktok: ['posts'],
  youtube: ['posts', 'shorts'],
  twitter: ['posts'],
  facebook: ['posts', 'reels'],
};

/** Whether a monitor may run this operation: a profile, or the list of a target's own posts or videos. */
export function isMonitorable(platform: string, operation: string): boolean {
  if (!isPlatform(platform) || !findOperation(platform, operation)) return false;
  return operation === 'profile' || MONITORABLE_LISTS[platform].includes(operation);
}

/** Request limit bound: a limit above max(200, max_results) is a validation error. */
export const BASE_LIMIT_MAX = 200;

/** The limit of a request that sends none (api-v1: default 12). */
export const DEFAULT_LIMIT = 12;

/** What a request without `limit` gets of this operation: the default, capped at its max_results. */
export function defaultLimitOf(spec: Pick<OperationSpec, 'max_results'>): number {
  return Math.min(DEFAULT_LIMIT, spec.max_results);
}
export const ABSOLUTE_LIMIT_MAX = Math.max(BASE_LIMIT_MAX, ...PLATFORMS.flatMap((p) => CATALOG[p].map((o) => o.max_results)));
