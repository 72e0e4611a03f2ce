import type { Platform, TargetKind } from './catalog';

/**
 * Target syntax per platform and target kind, and the normalized form used as the cache and
 * deduplication key and handed to providers (except a free-text query: see providerTarget). The service never fetches a caller's URL: a URL
 * is only parsed, and accepted when its host belongs to the platform.
 */

export type TargetCheck = { ok: true; normalized: string } | { ok: false; reason: string };

const HOSTS: Record<Platform, string[]> = {
  instagram: ['instagram.com', 'instagr.am'],
  tiktok: ['tiktok.com', 'vm.tiktok.com', 'm.tiktok.com', 'library.tiktok.com', 'ads.tiktok.com'],
  youtube: ['youtube.com', 'm.youtube.com', 'music.youtube.com', 'youtu.be'],
  twitter: ['twitter.com', 'x.com', 'mobile.twitter.com', 'mobile.x.com'],
  facebook: ['facebook.com', 'm.facebook.com', 'web.facebook.com', 'fb.com', 'fb.watch'],
};

const USERNAME: Record<Platform, RegExp> = {
  instagram: /^[a-z0-9._]{1,64}$/i,
  tiktok: /^[a-z0-9._-]{1,64}$/i,
  youtube: /^[a-z0-9._-]{1,100}$/i,
  twitter: /^[a-z0-9_]{1,64}$/i,
  facebook: /^[a-z0-9._-]{1,100}$/i,
};

const ID = /^[A-Za-z0-9_.:-]{1,200}$/;

function looksLikeUrl(value: string): boolean {
  return /^https?:\/\//i.test(value) || /^(www\.)?[a-z0-9-]+(\.[a-z0-9-]+)+\//i.test(value);
}

function parsePlatformUrl(platform: Platform, value: string): URL | string {
  let url: URL;
  try {
    url = new URL(/^https?:\/\//i.test(value) ? value : `https://${value}`);
  } catch {
    return 'is not a valid URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http(s) URL';
  if (url.username || url.password || url.port) return 'must not carry credentials or a port';
  const host = url.hostname.toLowerCase().replace(/^www\./, '');
  if (!HOSTS[platform].includes(host)) return `host ${host} does not belong to ${platform}`;
  return url;
}

/** Canonical URL text: https, lower-case host without www, no fragment, no tracking query, no trailing slash. */
function canonicalUrl(url: URL, keepParams: string[] = []): string {
  const host = url.hostname.toLowerCase().replace(/^www\./, '');
  const params = new URLSearchParams();
  for (const key of keepParams) {
    const v = url.searchParams.get(key);
    if (v !== null) params.set(key, v);
  }
  const path = url.pathname.replace(/\/+$/, '') || '';
  const query = params.toString();
  return `https://${host}${path}${query ? `?${query}` : ''}`;
}

const KEEP_PARAMS: Record<Platform, string[]> = {
  youtube: ['v', 'list'],
  facebook: ['id', 'v', 'story_fbid', 'fbid', 'comment_id', 'reply_comment_id'],
  tiktok: ['ad_id', 'id'],
  instagram: [],
  twitter: [],
};

function username(platform: Platform, raw: string): TargetCheck {
  let value = raw;
  if (looksLikeUrl(value)) {
    const url = parsePlatformUrl(platform, value);
    if (typeof url === 'string') return { ok: false, reason: url };
    const first = url.pathname.split('/').filter(Boolean)[0];
    if (!first) return { ok: false, reason: 'URL does not name an account' };
    value = decodeURIComponent(first);
  }
  value = value.replace(/^@/, '');
  if (!USERNAME[platform].test(value)) return { ok: false, reason: `is not a valid ${platform} username` };
  return { ok: true, normalized: value.toLowerCase() };
}

/**
 * A Facebook post's ID as a URL carries it: digits, or the opaque `pfbid…` form of newer links.
 * What a post URL names becomes a Graph API path (packages/providers, upstream/meta.ts), so it is
 * checked here, at admission, and again there.
 */
export const FACEBOOK_POST_ID = /^(?:\d{1,30}|pfbid0[A-Za-z0-9]{10,120})$/;
/** A Facebook object (page, comment) ID in a URL's query: digits only. */
export const FACEBOOK_NUMERIC_ID = /^\d{1,30}$/;

/** The IDs a Facebook post or comment URL carries, each checked; the reason of the first bad one, or null. */
function facebookUrlProblem(url: URL): string | null {
  const checks: Array<[string, string | null | undefined, RegExp]> = [
    ['story_fbid', url.searchParams.get('story_fbid'), FACEBOOK_POST_ID],
    ['fbid', url.searchParams.get('fbid'), FACEBOOK_POST_ID],
    ['id', url.searchParams.get('id'), FACEBOOK_NUMERIC_ID],
    ['comment_id', url.searchParams.get('comment_id'), FACEBOOK_NUMERIC_ID],
    ['reply_comment_id', url.searchParams.get('reply_comment_id'), FACEBOOK_NUMERIC_ID],
  ];
  const path = /^\/[^/]+\/(posts|videos)\/([^/]*)/.exec(url.pathname);
  if (path) checks.push([`${path[1]} ID`, path[2], FACEBOOK_POST_ID]);
  for (const [name, value, pattern] of checks) {
    if (value !== null && value !== undefined && !pattern.test(value))
      return `names a Facebook post whose ${name} is not a valid ID (digits, or pfbid…)`;
  }
  return null;
}

function idOrUrl(platform: Platform, raw: string, idPattern: RegExp = ID, postUrl = false): TargetCheck {
  if (looksLikeUrl(raw)) {
    const url = parsePlatformUrl(platform, raw);
    if (typeof url === 'string') return { ok: false, reason: url };
    if (postUrl && platform === 'facebook') {
      const problem = facebookUrlProblem(url);
      if (problem) return { ok: false, reason: problem };
    }
    return { ok: true, normalized: canonicalUrl(url, KEEP_PARAMS[platform]) };
  }
  if (!idPattern.test(raw)) return { ok: false, reason: 'is neither a URL of the platform nor a valid ID' };
  return { ok: true, normalized: raw };
}

function handleOrUrl(platform: Platform, raw: string): TargetCheck {
  if (looksLikeUrl(raw)) return idOrUrl(platform, raw);
  if (/^UC[A-Za-z0-9_-]{22}$/.test(raw) || /^\d{1,30}$/.test(raw)) return { ok: true, normalized: raw };
  return username(platform, raw);
}

/**
 * Platforms whose search query language is case-sensitive: the cache and deduplication key keeps
 * the query's case there. X: `OR` must be upper case to be an operator (docs.x.com, "Build a
 * query"). The others' searches (YouTube q, TikTok keyword, Meta search_terms, the vendor's
 * searches) ignore case, and their key folds it.
 */
export const CASE_SENSITIVE_QUERIES: ReadonlySet<Platform> = new Set<Platform>(['twitter']);

export function normalizeTarget(platform: Platform, kind: TargetKind, input: string): TargetCheck {
  const raw = input.trim();
  if (raw.length === 0) return { ok: false, reason: 'must not be empty' };
  if (/[\u0000-\u001f\u007f]/.test(raw)) return { ok: false, reason: 'must not contain control characters' };
  switch (kind) {
    case 'username':
      return username(platform, raw);
    case 'channel':
    case 'page':
      return handleOrUrl(platform, raw);
    case 'content':
      return idOrUrl(platform, raw, ID, true);
    case 'highlight':
    case 'playlist':
    case 'ad':
      return idOrUrl(platform, raw);
    case 'advertiser':
      return ID.test(raw) ? { ok: true, normalized: raw } : { ok: false, reason: 'is not a valid advertiser page_id' };
    case 'comment_url': {
      if (!looksLikeUrl(raw)) return { ok: false, reason: 'must be a comment_url taken from a comments result' };
      return idOrUrl(platform, raw, ID, true);
    }
    case 'hashtag': {
      const tag = raw.replace(/^#/, '');
      if (!/^[\p{L}\p{N}_]{1,100}$/u.test(tag)) return { ok: false, reason: 'is not a valid hashtag' };
      return { ok: true, normalized: tag.toLowerCase() };
    }
    case 'country':
      if (!/^[A-Za-z]{2}$/.test(raw)) return { ok: false, reason: 'must be a two-letter country code' };
      return { ok: true, normalized: raw.toUpperCase() };
    case 'query': {
      // Runs of white space are one space everywhere; case is folded only where the platform's
      // query language ignores it (X's operators are case-sensitive: "cats OR dogs" is not "cats or dogs").
      const spaced = raw.replace(/\s+/g, ' ');
      return { ok: true, normalized: CASE_SENSITIVE_QUERIES.has(platform) ? spaced : spaced.toLowerCase() };
    }
  }
}

/**
 * What the provider receives for a target: the normalized form, except for a free-text query,
 * which goes as the user wrote it (trimmed, the job's `target`), because case and operators are
 * meaning to the platform (X's `OR` must be capitals). The normalized form stays the cache and
 * deduplication key (case kept on CASE_SENSITIVE_QUERIES platforms, folded elsewhere).
 */
export function providerTarget(kind: TargetKind, submitted: string, normalized: string): string {
  return kind === 'query' ? submitted.trim() : normalized;
}
