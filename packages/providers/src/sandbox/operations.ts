import { CATALOG, type OperationSpec, type Platform } from '@sdx/catalog';
import type { Item, ProfileItem } from '../types';
import { person } from './ids';
import {
  adItem,
  advertiser,
  advertiserItem,
  analyticsItem,
  commentItem,
  contentUrl,
  highlightItem,
  listAge,
  listedProfile,
  playlistItem,
  postItem,
  profileItem,
  storyItem,
  transcriptItem,
  type Variant,
} from './items';
import { Rng, hash32 } from './random';
import { resolveSubject, type Subject } from './subject';

/**
 * The sandbox's generator for each catalog operation: item i of (platform, operation, target)
 * comes from a PRNG seeded by a hash of those three and i alone.
 */

const HOUR = 3600;
const DAY = 24 * HOUR;

export interface Stream {
  platform: Platform;
  spec: OperationSpec;
  subject: Subject;
  /** Item `index` of the stream. */
  item(index: number): Item;
}

type Generator = (s: StreamContext, index: number, rng: Rng) => Item;

interface StreamContext {
  platform: Platform;
  operation: string;
  subject: Subject;
  /** The target as free text (query, hashtag, country). */
  text: string;
  /** The subject account's profile (same for every operation on the target). */
  profile(): ProfileItem;
}

function subjectProfile(platform: Platform, subject: Subject): ProfileItem {
  const rng = Rng.forKey(`${platform}|profile|${subject.target}`);
  return profileItem(platform, rng, {
    username: subject.username,
    id: subject.userId,
    displayName: subject.displayName,
    prominent: true,
  });
}

/** The variant of the i-th item of an account's posts. */
function feedVariant(platform: Platform, rng: Rng): Variant {
  switch (platform) {
    case 'instagram':
      return rng.pick(['image', 'image', 'carousel', 'carousel', 'video']);
    case 'tiktok':
      return 'video';
    case 'youtube':
      return rng.chance(0.35) ? 'short' : 'video';
    case 'twitter':
      return rng.pick(['text', 'text', 'text', 'photo', 'video']);
    case 'facebook':
      return rng.pick(['text', 'photo', 'photo', 'video', 'link']);
  }
}

function postKind(platform: Platform, operation: string): 'post' | 'video' {
  const spec = CATALOG[platform].find((o) => o.operation === operation);
  return spec?.itemKind === 'video' ? 'video' : 'post';
}

/** The account's own posts, newest first; instagram feeds include collaborations. */
function accountPosts(variant?: Variant, spacing = 30 * HOUR): Generator {
  return (s, index, rng) => {
    const reach = Math.max(200, Math.round((s.profile().followers_count ?? 10_000) * 0.3));
    let author = s.subject.username;
    let collaborators: string[] = [];
    if (s.platform === 'instagram' && rng.chance(0.15)) {
      const partner = person(s.platform, rng).username;
      if (rng.chance(0.5)) {
        author = partner;
        collaborators = [s.subject.username];
      } else {
        collaborators = [partner];
      }
    }
    return postItem(s.platform, rng, index, {
      kind: postKind(s.platform, s.operation),
      username: author,
      age: listAge(rng, index, spacing),
      variant: variant ?? feedVariant(s.platform, rng),
      collaborators,
      reach,
    });
  };
}

/** Content by many accounts: hashtag pages, search results, trending lists, tagged posts. */
function discovered(o: { spacing: number; variant?: Variant; hashtag?: boolean; query?: boolean; mention?: boolean }): Generator {
  return (s, index, rng) =>
    postItem(s.platform, rng, index, {
      kind: postKind(s.platform, s.operation),
      username: person(s.platform, rng).username,
      age: listAge(rng, index, o.spacing),
      variant: o.variant ?? feedVariant(s.platform, rng),
      hashtag: o.hashtag ? s.text : undefined,
      query: o.query ? s.text : undefined,
      mention: o.mention ? s.subject.username : undefined,
    });
}

/** The one piece of content the target names. */
function namedContent(variant?: Variant): Generator {
  return (s, index, rng) => {
    const v = variant ?? (s.subject.short ? 'short' : feedVariant(s.platform, rng));
    return postItem(s.platform, rng, index, {
      kind: postKind(s.platform, s.operation),
      id: s.subject.contentId,
      username: s.subject.username,
      age: rng.int(1, 365) * DAY + rng.int(0, DAY - 1),
      variant: v,
    });
  };
}

const profile: Generator = (s) => s.profile();
const follows: Generator = (s, index, rng) => listedProfile(s.platform, rng, index);

const searchUsers: Generator = (s, index, rng) => {
  const slug = s.text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '')
    .slice(0, 14);
  const who = person(s.platform, rng, index);
  const sep = s.platform === 'facebook' ? '.' : '_';
  let handle = who.username;
  if (slug && s.platform === 'twitter') {
    if (slug.length + 1 + who.username.length <= 15) handle = `${slug}_${who.username}`;
  } else if (slug) {
    handle = rng.chance(0.5) ? `${slug}${sep}${who.username}` : `${who.username}${sep}${slug}`;
  }
  return listedProfile(s.platform, rng, index, { username: handle, displayName: who.displayName });
};

function contentComments(replies: boolean): Generator {
  return (s, index, rng) => {
    const variant: Variant = s.subject.short ? 'short' : 'video';
    return commentItem(
      s.platform,
      rng,
      index,
      {
        contentId: s.subject.contentId,
        contentUrl: contentUrl(s.platform, variant, s.subject.username, s.subject.contentId),
        owner: s.subject.username,
        commentId: replies ? (s.subject.commentId ?? undefined) : undefined,
      },
      listAge(rng, index, 2 * HOUR),
    );
  };
}

function transcript(variant: Variant): Generator {
  return (s, _index, rng) =>
    transcriptItem(s.platform, rng, {
      id: s.subject.contentId,
      url: contentUrl(s.platform, s.subject.short ? 'short' : variant, s.subject.username, s.subject.contentId),
      username: s.subject.username,
      age: rng.int(1, 365) * DAY,
    });
}

const adTranscript: Generator = (s, _index, rng) => {
  const who = advertiser(s.platform, Rng.forKey(`${s.platform}|advertiser|${s.subject.target}`), 0);
  return transcriptItem(s.platform, rng, {
    id: s.subject.contentId,
    url: `https://www.facebook.com/ads/library/?id=${s.subject.contentId}`,
    username: who.username,
    age: rng.int(2, 300) * DAY,
  });
};

const adSearch: Generator = (s, index, rng) =>
  adItem(s.platform, rng, index, { advertiser: advertiser(s.platform, rng, index, undefined, s.text), query: s.text });

const namedAd: Generator = (s, index, rng) =>
  adItem(s.platform, rng, index, {
    id: s.subject.contentId,
    advertiser: advertiser(s.platform, Rng.forKey(`${s.platform}|advertiser|${s.subject.target}`), 0),
  });

const companyAds: Generator = (s, index, rng) =>
  adItem(s.platform, rng, index, {
    advertiser: advertiser(s.platform, Rng.forKey(`${s.platform}|advertiser|${s.subject.target}`), 0, s.subject.userId),
  });

const GENERATORS: Record<Platform, Record<string, Generator>> = {
  instagram: {
    profile,
    post: namedContent(),
    followers: follows,
    following: follows,
    posts: accountPosts(),
    reels: accountPosts('reel', 40 * HOUR),
    comments: contentComments(false),
    highlights: (s, index, rng) => highlightItem(rng, index, s.subject.username),
    highlight_items: (s, index, rng) => storyItem(rng, index, s.subject.username, 30 * DAY + listAge(rng, index, 5 * HOUR), false),
    stories: (s, index, rng) => storyItem(rng, index, s.subject.username, listAge(rng, index, 25 * 60), true),
    hashtag: discovered({ spacing: 15 * 60, hashtag: true }),
    search_users: searchUsers,
    tagged: discovered({ spacing: 2 * DAY, mention: true }),
    transcript: transcript('reel'),
  },
  tiktok: {
    profile,
    posts: accountPosts('video', 20 * HOUR),
    post: namedContent('video'),
    comments: contentComments(false),
    hashtag: discovered({ spacing: 10 * 60, variant: 'video', hashtag: true }),
    search: discovered({ spacing: 6 * HOUR, variant: 'video', query: true }),
    search_users: searchUsers,
    trending: discovered({ spacing: 20 * 60, variant: 'video' }),
    transcript: transcript('video'),
    adlibrary_search: adSearch,
    adlibrary_ad: namedAd,
  },
  youtube: {
    profile,
    posts: accountPosts(undefined, 2 * DAY),
    video: namedContent(),
    comments: contentComments(false),
    search: discovered({ spacing: 5 * DAY, variant: 'video', query: true }),
    transcript: transcript('video'),
    shorts: accountPosts('short', DAY),
    trending: discovered({ spacing: 2 * HOUR, variant: 'video' }),
    playlist: (s, _index, rng) => playlistItem(rng, s.subject.contentId, s.subject.username),
    playlist_items: (s, index, rng) =>
      postItem('youtube', rng, index, {
        kind: 'video',
        username: rng.chance(0.8) ? s.subject.username : person('youtube', rng).username,
        age: listAge(rng, index, 3 * DAY),
        variant: 'video',
      }),
  },
  twitter: {
    profile,
    followers: follows,
    following: follows,
    posts: accountPosts(undefined, 9 * HOUR),
    post: namedContent(),
    search: discovered({ spacing: 20 * 60, query: true }),
    transcript: transcript('video'),
  },
  facebook: {
    profile,
    posts: accountPosts(undefined, 26 * HOUR),
    reels: accountPosts('reel', 3 * DAY),
    post: namedContent(),
    comments: contentComments(false),
    comment_replies: contentComments(true),
    adlibrary_companies: (s, index, rng) => advertiserItem(rng, index, s.text),
    adlibrary_company_ads: companyAds,
    adlibrary_search: adSearch,
    adlibrary_ad: namedAd,
    adlibrary_ad_transcript: adTranscript,
    transcript: transcript('video'),
    profile_analytics: (s, _index, rng) => {
      const p = s.profile();
      return analyticsItem(s.platform, rng, {
        id: p.id,
        username: p.username ?? s.subject.username,
        followers: p.followers_count ?? 0,
        posts: p.posts_count ?? 0,
      });
    },
  },
};

export function hasGenerator(platform: Platform, operation: string): boolean {
  return Object.prototype.hasOwnProperty.call(GENERATORS[platform], operation);
}

/** The item stream of (platform, operation, target). */
export function openStream(platform: Platform, spec: OperationSpec, target: string): Stream {
  const generator = GENERATORS[platform][spec.operation];
  if (!generator) throw new Error(`sandbox has no generator for ${platform}/${spec.operation}`);
  const subject = resolveSubject(platform, spec.target, target);
  let cachedProfile: ProfileItem | null = null;
  const context: StreamContext = {
    platform,
    operation: spec.operation,
    subject,
    text: target,
    profile: () => (cachedProfile ??= subjectProfile(platform, subject)),
  };
  const key = `${platform}|${spec.operation}|${target}`;
  const keyA = hash32(key, 1);
  const keyB = hash32(key, 2);
  return {
    platform,
    spec,
    subject,
    item: (index) => generator(context, index, Rng.at(keyA, keyB, index)),
  };
}
