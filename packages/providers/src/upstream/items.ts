import type { ItemKind, Platform } from '@sdx/catalog';
import type {
  AdItem,
  AdvertiserItem,
  CommentItem,
  HighlightItem,
  ItemBase,
  Metrics,
  PlaylistItem,
  PostItem,
  ProfileItem,
  StoryItem,
  TranscriptItem,
} from '../types';

/**
 * Builders of the normalized items. Every builder sets every field of its kind in a fixed order,
 * so items of one kind have one shape whichever upstream they come from. Upstream IDs become
 * strings; counts that arrive as strings (YouTube) become numbers.
 */

type Fields<T, K extends keyof T> = Partial<Omit<T, 'kind' | 'platform' | K>> & Pick<T, K>;

export function str(value: unknown): string | null {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  return null;
}

export function num(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value.trim())) return Number(value);
  return null;
}

/**
 * ISO 8601 from an ISO string or date, unix seconds (number or digits), or YYYYMMDD (number or
 * digits: TikTok's ad dates; eight digits are never unix seconds of this century).
 */
export function isoTime(value: unknown): string | null {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 19000101 && value <= 29991231) return isoTime(String(value));
  if (typeof value === 'number' || (typeof value === 'string' && /^\d{9,11}$/.test(value))) {
    return new Date(Number(value) * 1000).toISOString();
  }
  if (typeof value === 'string' && /^\d{8}$/.test(value)) {
    return `${value.slice(0, 4)}-${value.slice(4, 6)}-${value.slice(6, 8)}T00:00:00.000Z`;
  }
  if (typeof value === 'string') {
    const t = Date.parse(value.replace(/\+0000$/, 'Z'));
    return Number.isNaN(t) ? null : new Date(t).toISOString();
  }
  return null;
}

export function metrics(m: Partial<Metrics>): Metrics {
  return { views: m.views ?? null, likes: m.likes ?? null, comments: m.comments ?? null, shares: m.shares ?? null };
}

/** Hashtags of a caption, lower-cased, without '#', in order of appearance, unique. */
export function hashtagsOf(text: string | null): string[] {
  if (!text) return [];
  const tags = Array.from(text.matchAll(/#([\p{L}\p{N}_]+)/gu), (m) => m[1].toLowerCase());
  return Array.from(new Set(tags));
}

/**
 * The fields every kind shares, in their fixed order. `fallback` supplies caption and published_at
 * for kinds that derive them from another field when the upstream gives none.
 */
function common<K extends ItemKind>(
  kind: K,
  platform: Platform,
  f: Pick<ItemBase, 'id'> & Partial<Omit<ItemBase, 'kind' | 'platform' | 'id'>>,
  fallback: { caption?: string | null; published_at?: string | null } = {},
): ItemBase & { kind: K } {
  return {
    kind,
    platform,
    id: f.id,
    username: f.username ?? null,
    caption: f.caption ?? fallback.caption ?? null,
    url: f.url ?? null,
    published_at: f.published_at ?? fallback.published_at ?? null,
  };
}

export function profileItem(platform: Platform, f: Fields<ProfileItem, 'id'>): ProfileItem {
  return {
    ...common('profile', platform, f, { caption: f.bio }),
    display_name: f.display_name ?? null,
    bio: f.bio ?? null,
    avatar_url: f.avatar_url ?? null,
    verified: f.verified ?? false,
    private: f.private ?? false,
    followers_count: f.followers_count ?? null,
    following_count: f.following_count ?? null,
    posts_count: f.posts_count ?? null,
  };
}

export function postItem(platform: Platform, kind: 'post' | 'video', f: Fields<PostItem, 'id'>): PostItem {
  return {
    ...common(kind, platform, f),
    title: f.title ?? null,
    media_type: f.media_type ?? null,
    duration_seconds: f.duration_seconds ?? null,
    hashtags: f.hashtags ?? hashtagsOf(f.caption ?? null),
    collaborator_usernames: f.collaborator_usernames ?? [],
    metrics: f.metrics ?? metrics({}),
  };
}

export function commentItem(platform: Platform, f: Fields<CommentItem, 'id'>): CommentItem {
  return {
    ...common('comment', platform, f),
    parent_id: f.parent_id ?? null,
    comment_url: f.comment_url ?? null,
    likes: f.likes ?? null,
    reply_count: f.reply_count ?? null,
  };
}

export function playlistItem(platform: Platform, f: Fields<PlaylistItem, 'id'>): PlaylistItem {
  return {
    ...common('playlist', platform, f),
    title: f.title ?? null,
    items_count: f.items_count ?? null,
  };
}

export function adItem(platform: Platform, f: Fields<AdItem, 'id'>): AdItem {
  return {
    ...common('ad', platform, f, { caption: f.body, published_at: f.first_shown_at }),
    advertiser_id: f.advertiser_id ?? null,
    advertiser_name: f.advertiser_name ?? null,
    first_shown_at: f.first_shown_at ?? null,
    last_shown_at: f.last_shown_at ?? null,
    status: f.status ?? null,
    body: f.body ?? null,
    media_urls: f.media_urls ?? [],
    platforms: f.platforms ?? [],
    countries: f.countries ?? [],
    spend: f.spend ?? null,
    impressions: f.impressions ?? null,
    reach: f.reach ?? null,
  };
}

export function highlightItem(platform: Platform, f: Fields<HighlightItem, 'id'>): HighlightItem {
  return {
    ...common('highlight', platform, f, { caption: f.title }),
    title: f.title ?? null,
    cover_url: f.cover_url ?? null,
    items_count: f.items_count ?? null,
  };
}

export function storyItem(platform: Platform, f: Fields<StoryItem, 'id'>): StoryItem {
  return {
    ...common('story', platform, f),
    media_type: f.media_type ?? null,
    media_url: f.media_url ?? null,
    expires_at: f.expires_at ?? null,
  };
}

export function advertiserItem(platform: Platform, f: Fields<AdvertiserItem, 'id' | 'name' | 'page_id'>): AdvertiserItem {
  return {
    ...common('advertiser', platform, f, { caption: f.name }),
    name: f.name,
    page_id: f.page_id,
    category: f.category ?? null,
    ads_count: f.ads_count ?? null,
  };
}

export function transcriptItem(platform: Platform, f: Fields<TranscriptItem, 'id' | 'text'>): TranscriptItem {
  return {
    ...common('transcript', platform, f),
    language: f.language ?? null,
    text: f.text,
    segments: f.segments ?? [],
  };
}

/** ISO 8601 duration (PT1H2M3S) in seconds. */
export function isoDurationSeconds(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const m = /^P(?:(\d+)D)?T?(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?$/.exec(value);
  if (!m) return null;
  const [, d, h, min, s] = m;
  return Number(d ?? 0) * 86400 + Number(h ?? 0) * 3600 + Number(min ?? 0) * 60 + Number(s ?? 0);
}

/**
 * A boolean flag as the platforms send it: a JSON bool in the field tables, the string "true"
 * or "false" in some published examples (TikTok's `has_more`). Anything else is false.
 */
export function flag(value: unknown): boolean {
  return value === true || (typeof value === 'string' && value.trim().toLowerCase() === 'true');
}

let countryNames: Map<string, string> | null = null;

/** ISO 3166-1 alpha-2 code of an English country name ("Germany" → "DE"), or null. */
export function countryCode(name: string): string | null {
  if (!countryNames) {
    countryNames = new Map();
    const display = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
    for (let a = 65; a <= 90; a++) {
      for (let b = 65; b <= 90; b++) {
        const code = String.fromCharCode(a, b);
        const english = display.of(code);
        if (english) countryNames.set(english.toLowerCase(), code);
      }
    }
  }
  const key = name.trim().toLowerCase();
  if (/^[a-z]{2}$/.test(key)) return key.toUpperCase();
  return countryNames.get(key) ?? null;
}

/** Distinct upper-case two-letter codes, in first-seen order. */
export function countryCodes(values: Iterable<unknown>): string[] {
  const out: string[] = [];
  for (const v of values) {
    const code = typeof v === 'string' && /^[A-Za-z]{2}$/.test(v.trim()) ? v.trim().toUpperCase() : null;
    if (code && !out.includes(code)) out.push(code);
  }
  return out;
}
