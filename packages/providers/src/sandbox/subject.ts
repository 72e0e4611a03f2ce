import type { Platform, TargetKind } from '@sdx/catalog';
import { adId, contentId, displayNameFor, person, playlistId, userId } from './ids';
import { Rng } from './random';

/**
 * What a normalized target names: an account, a piece of content, a highlight, playlist, ad,
 * advertiser or comment, or a free text (query, hashtag, country). Whatever the target does
 * not say (the author of a bare shortcode, the numeric ID of a handle) is derived from the
 * target, so every operation on the same target agrees about it.
 */
export interface Subject {
  target: string;
  /** The account the target names, or that owns the content the target names. */
  username: string;
  userId: string;
  displayName: string;
  /** The content, highlight, playlist or ad ID the target names. */
  contentId: string;
  /** The comment a comment_url target names. */
  commentId: string | null;
  /** youtube: the target names a Short. */
  short: boolean;
}

const CONTENT_ID: Record<Platform, RegExp> = {
  instagram: /^[A-Za-z0-9_-]{9,40}$/,
  tiktok: /^\d{6,25}$/,
  youtube: /^[A-Za-z0-9_-]{11}$/,
  twitter: /^\d{1,25}$/,
  facebook: /^(\d{3,25}(_\d{3,25})?|pfbid[A-Za-z0-9]{10,80})$/,
};

function parseUrl(target: string): URL | null {
  if (!/^https?:\/\//i.test(target)) return null;
  try {
    return new URL(target);
  } catch {
    return null;
  }
}

function segments(url: URL): string[] {
  return url.pathname
    .split('/')
    .filter(Boolean)
    .map((s) => decodeURIComponent(s));
}

/** The content ID and (when the URL shows it) the author of a content target. */
function parseContent(platform: Platform, target: string): { id: string | null; author: string | null; short: boolean } {
  const url = parseUrl(target);
  if (!url) return { id: target, author: null, short: false };
  const parts = segments(url);
  const after = (name: string): string | null => {
    const at = parts.indexOf(name);
    return at >= 0 ? (parts[at + 1] ?? null) : null;
  };
  switch (platform) {
    case 'instagram':
      return { id: after('p') ?? after('reel') ?? after('reels') ?? after('tv'), author: null, short: false };
    case 'tiktok': {
      const handle = parts.find((p) => p.startsWith('@'));
      return { id: after('video') ?? after('photo'), author: handle ? handle.slice(1) : null, short: false };
    }
    case 'youtube': {
      const host = url.hostname.replace(/^www\./, '');
      const id =
        url.searchParams.get('v') ??
        (host === 'youtu.be' ? (parts[0] ?? null) : null) ??
        after('shorts') ??
        after('live') ??
        after('embed');
      return { id, author: null, short: parts[0] === 'shorts' };
    }
    case 'twitter':
      return { id: after('status'), author: parts[1] === 'status' ? (parts[0] ?? null) : null, short: false };
    case 'facebook': {
      const id =
        after('posts') ??
        after('videos') ??
        after('reel') ??
        url.searchParams.get('story_fbid') ??
        url.searchParams.get('v') ??
        url.searchParams.get('fbid');
      const first = parts[0];
      const author =
        first && !['reel', 'watch', 'permalink.php', 'photo', 'photo.php', 'story.php', 'share'].includes(first) ? first : null;
      return { id, author, short: false };
    }
  }
}

/** The account a channel (youtube) or page (facebook) target names: a handle or an ID. */
function parseAccount(platform: Platform, target: string): { handle: string | null; id: string | null } {
  const url = parseUrl(target);
  if (!url) {
    if (platform === 'youtube' && /^UC[A-Za-z0-9_-]{22}$/.test(target)) return { handle: null, id: target };
    if (/^\d+$/.test(target)) return { handle: null, id: platform === 'facebook' ? target : null };
    return { handle: target.replace(/^@/, ''), id: null };
  }
  const parts = segments(url);
  const first = parts[0] ?? null;
  if (platform === 'youtube') {
    if (first?.startsWith('@')) return { handle: first.slice(1), id: null };
    if (first === 'channel' && parts[1]) return { handle: null, id: parts[1] };
    if ((first === 'c' || first === 'user') && parts[1]) return { handle: parts[1], id: null };
    return { handle: first, id: null };
  }
  const idParam = url.searchParams.get('id');
  if (idParam && /^\d+$/.test(idParam)) return { handle: null, id: idParam };
  if (first && /^\d+$/.test(first)) return { handle: null, id: first };
  return { handle: first, id: null };
}

/** The ID a highlight, playlist or ad target names. */
function parseNamedId(kind: TargetKind, target: string): string | null {
  const url = parseUrl(target);
  if (kind === 'highlight') {
    const source = url ? url.pathname : target;
    return /(\d{5,})/.exec(source)?.[1] ?? null;
  }
  if (kind === 'playlist') {
    if (!url) return target;
    return url.searchParams.get('list');
  }
  // ad: facebook ads/library/?id=N, tiktok ads/detail/?ad_id=N, or a bare ID.
  if (!url) return /^\d+$/.test(target) ? target : null;
  return url.searchParams.get('id') ?? url.searchParams.get('ad_id') ?? /(\d{6,})/.exec(url.pathname)?.[1] ?? null;
}

export function resolveSubject(platform: Platform, kind: TargetKind, target: string): Subject {
  const rng = Rng.forKey(`${platform}|subject|${target}`);
  const derived = person(platform, rng);
  const derivedUserId = userId(platform, rng, rng.int(0, 999_999));
  const derivedContentId = contentId(platform, rng, rng.int(0, 999_999));
  const subject: Subject = {
    target,
    username: derived.username,
    userId: derivedUserId,
    displayName: derived.displayName,
    contentId: derivedContentId,
    commentId: null,
    short: false,
  };
  const named = (handle: string): void => {
    subject.username = handle;
    subject.displayName = displayNameFor(handle);
  };
  switch (kind) {
    case 'username':
      named(target);
      break;
    case 'channel':
    case 'page': {
      const account = parseAccount(platform, target);
      if (account.handle) named(account.handle);
      if (account.id) subject.userId = account.id;
      break;
    }
    case 'content': {
      const content = parseContent(platform, target);
      if (content.id && CONTENT_ID[platform].test(content.id)) subject.contentId = content.id;
      if (content.author) named(content.author);
      subject.short = content.short;
      break;
    }
    case 'highlight':
    case 'playlist':
    case 'ad': {
      const id = parseNamedId(kind, target);
      if (kind === 'playlist') subject.contentId = id && /^[A-Za-z0-9_-]{10,64}$/.test(id) ? id : playlistId(rng);
      else if (kind === 'ad') subject.contentId = id ?? adId(platform, rng, rng.int(0, 999_999));
      else subject.contentId = id ?? `17${rng.digits(15)}`;
      break;
    }
    case 'advertiser':
      subject.userId = target;
      break;
    case 'comment_url': {
      const url = parseUrl(target);
      const derivedCommentId = `${rng.int(1, 9)}${rng.digits(15)}`;
      subject.commentId = derivedCommentId;
      if (url) {
        const content = parseContent(platform, target);
        if (content.id && CONTENT_ID[platform].test(content.id)) subject.contentId = content.id;
        if (content.author) named(content.author);
        const commentParam = url.searchParams.get('reply_comment_id') ?? url.searchParams.get('comment_id');
        if (commentParam && /^\d{1,30}$/.test(commentParam)) subject.commentId = commentParam;
      }
      break;
    }
    case 'query':
    case 'hashtag':
    case 'country':
      break;
  }
  return subject;
}
