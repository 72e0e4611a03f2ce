import type { Platform } from '@sdx/catalog';
import type {
  AdItem,
  AdvertiserItem,
  AnalyticsItem,
  CommentItem,
  HighlightItem,
  Metrics,
  PlaylistItem,
  PostItem,
  ProfileItem,
  StoryItem,
  TranscriptItem,
  TranscriptSegment,
} from '../types';
import { adId, commentId, contentId, mediaId, person, userId } from './ids';
import { type Rng, uniqueDigits } from './random';
import {
  AD_BODIES,
  BIO_LINES,
  BRAND_PARTS_A,
  BRAND_PARTS_B,
  CATEGORIES,
  COMMENTS,
  COUNTRIES,
  EU_COUNTRIES,
  HASHTAGS,
  HIGHLIGHT_TITLES,
  PHRASES,
  PLAYLIST_TITLES,
  TITLES,
  TOPIC_WORDS,
  TRANSCRIPT_SENTENCES,
} from './words';

/**
 * Builders of normalized items shaped like each network's data. Timestamps count back from a
 * fixed epoch, never from the clock, so items are reproducible.
 */

export const SANDBOX_EPOCH_MS = Date.UTC(2026, 0, 1);

const HOUR = 3600;
const DAY = 24 * HOUR;

/** ISO timestamp `seconds` before the sandbox epoch, without milliseconds. */
export function isoBefore(seconds: number): string {
  return new Date(SANDBOX_EPOCH_MS - Math.round(seconds) * 1000).toISOString().replace('.000Z', 'Z');
}

/** Seconds before the epoch of the index-th item of a newest-first list with the given spacing. */
export function listAge(rng: Rng, index: number, spacingSeconds: number): number {
  return index * spacingSeconds + rng.int(0, spacingSeconds - 1);
}

export function profileUrl(platform: Platform, handle: string): string {
  switch (platform) {
    case 'instagram':
      return `https://www.instagram.com/${handle}/`;
    case 'tiktok':
      return `https://www.tiktok.com/@${handle}`;
    case 'youtube':
      return `https://www.youtube.com/@${handle}`;
    case 'twitter':
      return `https://x.com/${handle}`;
    case 'facebook':
      return `https://www.facebook.com/${handle}`;
  }
}

/** How a piece of content is presented; decides its URL, media type and duration. */
export type Variant = 'image' | 'carousel' | 'video' | 'reel' | 'short' | 'text' | 'photo' | 'link';

export function contentUrl(platform: Platform, variant: Variant, handle: string, id: string): string {
  switch (platform) {
    case 'instagram':
      return variant === 'reel' ? `https://www.instagram.com/reel/${id}/` : `https://www.instagram.com/p/${id}/`;
    case 'tiktok':
      return `https://www.tiktok.com/@${handle}/video/${id}`;
    case 'youtube':
      return variant === 'short' ? `https://www.youtube.com/shorts/${id}` : `https://www.youtube.com/watch?v=${id}`;
    case 'twitter':
      return `https://x.com/${handle}/status/${id}`;
    case 'facebook':
      return variant === 'reel' ? `https://www.facebook.com/reel/${id}` : `https://www.facebook.com/${handle}/posts/${id}`;
  }
}

function avatarUrl(platform: Platform, rng: Rng, id: string): string {
  switch (platform) {
    case 'instagram':
      return `https://scontent.cdninstagram.com/v/t51.2885-19/${id}_${rng.digits(15)}_n.jpg`;
    case 'tiktok':
      return `https://p16-sign-va.tiktokcdn.com/tos-maliva-avt-0068/${rng.base62(32).toLowerCase()}~c5_720x720.jpeg`;
    case 'youtube':
      return `https://yt3.googleusercontent.com/${rng.base64url(48)}=s176-c-k-c0x00ffffff-no-rj`;
    case 'twitter':
      return `https://pbs.twimg.com/profile_images/${rng.digits(19)}/${rng.base62(8)}_400x400.jpg`;
    case 'facebook':
      return `https://scontent.xx.fbcdn.net/v/t39.30808-1/${id}_${rng.digits(15)}_n.jpg`;
  }
}

export interface ProfileOptions {
  username: string;
  id: string;
  displayName: string;
  /** The account a request names (larger, often verified), as opposed to an account in a list. */
  prominent: boolean;
}

export function profileItem(platform: Platform, rng: Rng, o: ProfileOptions): ProfileItem {
  const followers = o.prominent ? rng.logInt(2_000, 40_000_000) : rng.logInt(5, 50_000);
  const bio = rng.chance(o.prominent ? 1 : 0.7) ? `${rng.pick(BIO_LINES)}${rng.chance(0.5) ? ` | ${rng.pick(TOPIC_WORDS)}` : ''}` : null;
  return {
    kind: 'profile',
    platform,
    id: o.id,
    username: o.username,
    caption: bio,
    url: profileUrl(platform, o.username),
    published_at: null,
    display_name: o.displayName,
    bio,
    avatar_url: avatarUrl(platform, rng, o.id),
    verified: o.prominent ? followers > 500_000 || rng.chance(0.1) : rng.chance(0.01),
    private: o.prominent ? false : (platform === 'instagram' || platform === 'twitter') && rng.chance(0.15),
    followers_count: followers,
    following_count: rng.logInt(0, 7_500),
    posts_count: platform === 'twitter' ? rng.logInt(10, 90_000) : rng.logInt(o.prominent ? 40 : 0, 6_000),
  };
}

/** A profile of some account in a list (followers, following, search results). */
export function listedProfile(
  platform: Platform,
  rng: Rng,
  index: number,
  who: { username: string; displayName: string } = person(platform, rng, index),
): ProfileItem {
  return profileItem(platform, rng, {
    username: who.username,
    id: userId(platform, rng, index),
    displayName: who.displayName,
    prominent: false,
  });
}

function metricsFor(platform: Platform, rng: Rng, variant: Variant, reach: number): Metrics {
  const views = Math.round(reach * (0.5 + rng.float() * 4));
  const likes = Math.round(views * (0.01 + rng.float() * 0.12));
  const comments = Math.round(likes * (0.005 + rng.float() * 0.05));
  const shares = Math.round(likes * (0.002 + rng.float() * 0.08));
  const video = variant === 'video' || variant === 'reel' || variant === 'short';
  switch (platform) {
    case 'instagram':
      return { views: video ? views : null, likes, comments, shares: null };
    case 'tiktok':
      return { views, likes, comments, shares };
    case 'youtube':
      return { views, likes, comments, shares: null };
    case 'twitter':
      return { views, likes, comments, shares };
    case 'facebook':
      return { views: video ? views : null, likes, comments, shares };
  }
}

function durationFor(platform: Platform, rng: Rng, variant: Variant): number | null {
  switch (variant) {
    case 'short':
      return rng.int(8, 59);
    case 'reel':
      return rng.int(5, 90);
    case 'video':
      if (platform === 'youtube') return rng.int(90, 2_700);
      if (platform === 'tiktok') return rng.int(6, 180);
      return rng.int(5, 140);
    default:
      return null;
  }
}

export interface PostOptions {
  kind: 'post' | 'video';
  username: string;
  /** Seconds before the epoch. */
  age: number;
  variant: Variant;
  /** Uses this ID instead of a generated one (a request that names the content). */
  id?: string;
  /** hashtag results carry the hashtag. */
  hashtag?: string;
  /** search results mention the query. */
  query?: string;
  /** tagged results mention the tagged account. */
  mention?: string;
  collaborators?: string[];
  /** Typical audience of the author, scales the metrics. */
  reach?: number;
}

export function postItem(platform: Platform, rng: Rng, index: number, o: PostOptions): PostItem {
  const id = o.id ?? contentId(platform, rng, index);
  const maxTags = platform === 'twitter' || platform === 'facebook' ? 2 : 5;
  let tags = rng.sample(HASHTAGS, rng.int(platform === 'twitter' ? 0 : 1, maxTags)) as string[];
  if (o.hashtag) tags = [o.hashtag, ...tags.filter((t) => t !== o.hashtag)];
  let text: string = rng.pick(PHRASES);
  if (o.query) text = `${text}: ${o.query}`;
  if (o.mention) text = `${text} with @${o.mention}`;
  const tagText = tags.map((t) => `#${t}`).join(' ');
  let title: string | null = null;
  let caption: string;
  if (platform === 'youtube') {
    title = o.query ? `${capitalizeWords(o.query)}: ${rng.pick(TITLES)}` : rng.pick(TITLES);
    if (o.variant === 'short') title = `${title} #shorts`;
    const sentence = /[.!?]$/.test(text) ? text : `${text}.`;
    caption = `${sentence}\n\nChapters, links and credits below.${tagText ? `\n\n${tagText}` : ''}`;
  } else {
    caption = tagText ? `${text} ${tagText}` : text;
  }
  return {
    kind: o.kind,
    platform,
    id,
    username: o.username,
    caption,
    url: contentUrl(platform, o.variant, o.username, id),
    published_at: isoBefore(o.age),
    title,
    media_type: o.variant,
    duration_seconds: durationFor(platform, rng, o.variant),
    hashtags: tags.map((t) => t.toLowerCase()),
    collaborator_usernames: o.collaborators ?? [],
    metrics: metricsFor(platform, rng, o.variant, o.reach ?? rng.logInt(200, 2_000_000)),
  };
}

function capitalizeWords(text: string): string {
  return text.replace(/(^|\s)([a-z])/g, (_m, space: string, letter: string) => space + letter.toUpperCase());
}

export interface CommentParent {
  /** The commented content. */
  contentId: string;
  contentUrl: string;
  /** The author of the content (facebook: the page in the URL). */
  owner: string;
  /** Set for replies: the comment replied to. */
  commentId?: string;
}

export function commentItem(platform: Platform, rng: Rng, index: number, parent: CommentParent, age: number): CommentItem {
  const id = commentId(platform, rng, index);
  const reply = parent.commentId !== undefined;
  let url: string;
  let commentUrl: string | null = null;
  switch (platform) {
    case 'instagram':
      url = `https://www.instagram.com/p/${parent.contentId}/c/${reply ? `${parent.commentId}/r/${id}` : id}/`;
      break;
    case 'youtube':
      url = `https://www.youtube.com/watch?v=${parent.contentId}&lc=${reply ? `${parent.commentId}.${id}` : id}`;
      break;
    case 'facebook': {
      const base = `https://www.facebook.com/${parent.owner}/posts/${parent.contentId}`;
      url = reply ? `${base}?comment_id=${parent.commentId}&reply_comment_id=${id}` : `${base}?comment_id=${id}`;
      commentUrl = url;
      break;
    }
    default:
      url = parent.contentUrl;
  }
  const who = person(platform, rng);
  const likes = rng.logInt(0, 25_000);
  return {
    kind: 'comment',
    platform,
    id,
    username: who.username,
    caption: rng.chance(0.2) ? `@${parent.owner} ${rng.pick(COMMENTS)}` : rng.pick(COMMENTS),
    url,
    published_at: isoBefore(age),
    parent_id: reply ? (parent.commentId ?? null) : parent.contentId,
    comment_url: commentUrl,
    likes,
    reply_count: reply ? 0 : Math.round(likes * rng.float() * 0.05),
  };
}

export function highlightItem(rng: Rng, index: number, owner: string): HighlightItem {
  const id = `17${rng.int(8, 9)}${rng.digits(8)}${uniqueDigits(index, rng.salt)}`;
  const title = rng.pick(HIGHLIGHT_TITLES);
  return {
    kind: 'highlight',
    platform: 'instagram',
    id,
    username: owner,
    caption: title,
    url: `https://www.instagram.com/stories/highlights/${id}/`,
    published_at: isoBefore(listAge(rng, index, 21 * DAY)),
    title,
    cover_url: `https://scontent.cdninstagram.com/v/t51.2885-15/${rng.digits(9)}_${id}_n.jpg`,
    items_count: rng.int(1, 100),
  };
}

/** A story; a live story (not from a highlight) expires 24 hours after it was posted. */
export function storyItem(rng: Rng, index: number, owner: string, age: number, live: boolean): StoryItem {
  const id = mediaId(rng, index);
  const video = rng.chance(0.35);
  return {
    kind: 'story',
    platform: 'instagram',
    id,
    username: owner,
    caption: rng.chance(0.4) ? rng.pick(PHRASES) : null,
    url: `https://www.instagram.com/stories/${owner}/${id}/`,
    published_at: isoBefore(age),
    media_type: video ? 'video' : 'image',
    media_url: video
      ? `https://scontent.cdninstagram.com/o1/v/t16/f2/m69/${id}_${rng.digits(10)}.mp4`
      : `https://scontent.cdninstagram.com/v/t51.2885-15/${id}_${rng.digits(10)}_n.jpg`,
    expires_at: live ? isoBefore(age - DAY) : null,
  };
}

export interface TranscriptOptions {
  id: string;
  url: string;
  username: string;
  age: number;
}

export function transcriptItem(platform: Platform, rng: Rng, o: TranscriptOptions): TranscriptItem {
  const count = rng.int(6, 24);
  const segments: TranscriptSegment[] = [];
  let at = rng.int(0, 20) / 10;
  for (let i = 0; i < count; i++) {
    const length = rng.int(15, 60) / 10;
    const start = Math.round(at * 100) / 100;
    const end = Math.round((at + length) * 100) / 100;
    segments.push({ start, end, text: rng.pick(TRANSCRIPT_SENTENCES) });
    at += length + rng.int(0, 8) / 10;
  }
  const text = segments.map((s) => s.text).join(' ');
  return {
    kind: 'transcript',
    platform,
    id: o.id,
    username: o.username,
    caption: segments[0]?.text ?? null,
    url: o.url,
    published_at: isoBefore(o.age),
    language: 'en',
    text,
    segments,
  };
}

export function playlistItem(rng: Rng, id: string, owner: string): PlaylistItem {
  const title = rng.pick(PLAYLIST_TITLES);
  return {
    kind: 'playlist',
    platform: 'youtube',
    id,
    username: owner,
    caption: `${title}: ${rng.pick(PHRASES)}.`,
    url: `https://www.youtube.com/playlist?list=${id}`,
    published_at: isoBefore(rng.int(30, 1_500) * DAY),
    title,
    items_count: rng.int(3, 500),
  };
}

export interface Advertiser {
  id: string;
  name: string;
  username: string;
}

/** An advertiser (brand) drawn from rng; `pageId` fixes its ID when a request names it. */
export function advertiser(platform: Platform, rng: Rng, index: number, pageId?: string, query?: string): Advertiser {
  const brand = `${rng.pick(BRAND_PARTS_A)} ${rng.pick(BRAND_PARTS_B)}`;
  const name = query && rng.chance(0.7) ? `${capitalizeWords(query)} ${rng.pick(BRAND_PARTS_B)}` : brand;
  const username = name.toLowerCase().replace(/[^a-z0-9]+/g, platform === 'facebook' ? '' : '_');
  return { id: pageId ?? userId(platform, rng, index), name, username };
}

export interface AdOptions {
  advertiser: Advertiser;
  id?: string;
  query?: string;
}

export function adItem(platform: Platform, rng: Rng, index: number, o: AdOptions): AdItem {
  const id = o.id ?? adId(platform, rng, index);
  const firstAge = rng.int(2, 400) * DAY + rng.int(0, DAY - 1);
  const active = rng.chance(0.55);
  const lastAge = active ? rng.int(0, 2) * DAY : rng.int(0, Math.floor(firstAge / DAY) - 1) * DAY;
  const body = o.query ? `${rng.pick(AD_BODIES)} ${capitalizeWords(o.query)}.` : rng.pick(AD_BODIES);
  const facebook = platform === 'facebook';
  const video = rng.chance(0.5);
  const media = facebook
    ? `https://scontent.xx.fbcdn.net/v/t39.35426-6/${id}_${rng.digits(15)}_n.${video ? 'mp4' : 'jpg'}`
    : `https://p16-sign-sg.tiktokcdn.com/tos-alisg-v-0051c001/${rng.base62(32).toLowerCase()}.mp4`;
  const spendLow = rng.pick([0, 100, 500, 1_000, 5_000, 10_000]);
  const impressionsLow = rng.pick([1, 5, 10, 50, 100, 500]);
  return {
    kind: 'ad',
    platform,
    id,
    username: o.advertiser.username,
    caption: body,
    url: facebook ? `https://www.facebook.com/ads/library/?id=${id}` : `https://library.tiktok.com/ads/detail/?ad_id=${id}`,
    published_at: isoBefore(firstAge),
    advertiser_id: o.advertiser.id,
    advertiser_name: o.advertiser.name,
    first_shown_at: isoBefore(firstAge),
    last_shown_at: isoBefore(lastAge),
    status: active ? 'active' : 'inactive',
    body,
    media_urls: [media],
    platforms: facebook ? ['facebook', ...rng.sample(['instagram', 'messenger', 'audience_network'], rng.int(0, 3))] : ['tiktok'],
    countries: rng.sample(facebook ? COUNTRIES : EU_COUNTRIES, rng.int(1, 4)),
    spend: facebook ? `${spendLow}-${spendLow === 0 ? 99 : spendLow * 5 - 1} USD` : null,
    // As the platforms publish them: Meta an impressions range, TikTok only reach (unique users seen).
    impressions: facebook ? `${impressionsLow}K-${impressionsLow * 5}K` : null,
    reach: facebook ? null : `${impressionsLow}K`,
  };
}

export function advertiserItem(rng: Rng, index: number, query: string): AdvertiserItem {
  const who = advertiser('facebook', rng, index, undefined, query);
  return {
    kind: 'advertiser',
    platform: 'facebook',
    id: who.id,
    username: who.username,
    caption: rng.chance(0.6) ? rng.pick(BIO_LINES) : null,
    url: `https://www.facebook.com/${who.id}`,
    published_at: null,
    name: who.name,
    page_id: who.id,
    category: rng.pick(CATEGORIES),
    ads_count: rng.logInt(1, 5_000),
  };
}

export interface AnalyticsOptions {
  id: string;
  username: string;
  followers: number;
  posts: number;
}

export function analyticsItem(platform: Platform, rng: Rng, o: AnalyticsOptions): AnalyticsItem {
  const rate = 0.002 + rng.float() * 0.06;
  const averageLikes = Math.round(o.followers * rate * 0.9);
  const averageComments = Math.round(o.followers * rate * 0.1);
  return {
    kind: 'analytics',
    platform,
    id: o.id,
    username: o.username,
    caption: null,
    url: profileUrl(platform, o.username),
    published_at: isoBefore(0),
    followers_count: o.followers,
    posts_count: o.posts,
    average_likes: averageLikes,
    average_comments: averageComments,
    engagement_rate: Math.round(rate * 10_000) / 100,
    posting_frequency_per_week: rng.int(2, 140) / 10,
  };
}
