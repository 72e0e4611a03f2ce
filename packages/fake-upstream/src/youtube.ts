/**
 * Fake YouTube Data API v3 under /youtube/v3.
 * Shapes follow https://developers.google.com/youtube/v3/docs/channels/list,
 * /playlistItems/list, /videos/list, /commentThreads/list, /search/list, /playlists/list
 * (list responses: kind, etag, nextPageToken, pageInfo{totalResults, resultsPerPage}, items) and
 * https://developers.google.com/youtube/v3/docs/errors (error{code, message, errors[{domain, reason, message}]}).
 * Parameters, parts and response bodies follow the discovery document (references/youtube-v3.json):
 * a parameter the method does not have answers 400 "Cannot bind query parameter" and an unknown
 * part 400 unknownPart, as the Google API front end does. An invalid key answers 400 badRequest
 * with a google.rpc.ErrorInfo detail of reason API_KEY_INVALID (https://cloud.google.com/apis/design/errors).
 */
import { FIXTURES } from './fixtures';
import { youtubeQueryProblems } from './reference';
import {
  decodeToken,
  encodeToken,
  hash,
  iso,
  pick,
  sentence,
  type FakeApi,
  type FakeRequest,
  type FakeResponse,
  type MisbehaveRule,
} from './util';

const F = FIXTURES.youtube;
const PREFIX = '/youtube/v3';
const T0 = Math.floor(Date.now() / 3_600_000) * 3_600_000;

function error(code: number, reason: string, message: string, domain = 'youtube.api'): FakeResponse {
  return { status: code, body: { error: { code, message, errors: [{ message, domain, reason }] } } };
}

const KEY_INVALID: FakeResponse = {
  status: 400,
  body: {
    error: {
      code: 400,
      message: 'API key not valid. Please pass a valid API key.',
      errors: [{ message: 'API key not valid. Please pass a valid API key.', domain: 'global', reason: 'badRequest' }],
      status: 'INVALID_ARGUMENT',
      details: [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'API_KEY_INVALID',
          domain: 'googleapis.com',
          metadata: { service: 'youtube.googleapis.com' },
        },
        {
          '@type': 'type.googleapis.com/google.rpc.LocalizedMessage',
          locale: 'en-US',
          message: 'API key not valid. Please pass a valid API key.',
        },
      ],
    },
  },
};

function unknownParameter(name: string): FakeResponse {
  const message = `Invalid JSON payload received. Unknown name "${name}": Cannot bind query parameter. Field '${name}' could not be found in request message.`;
  return {
    status: 400,
    body: {
      error: {
        code: 400,
        message,
        errors: [{ message, reason: 'invalid' }],
        status: 'INVALID_ARGUMENT',
        details: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ description: message }] }],
      },
    },
  };
}

/** Video IDs are 11 characters: "fv", a stream code and a 7-digit index, so the fake can look any up. */
const STREAMS: Record<string, number> = { ch: 0, pl: 1, sr: 2, tr: 3, cd: 4, sh: 5 };
const videoIdOf = (stream: string, index: number): string => `fv${stream}${String(index).padStart(7, '0')}`;

function knownVideo(id: string): { stream: string; index: number } | null {
  const m = /^fv(ch|pl|sr|tr|cd|sh)(\d{7})$/.exec(id);
  if (!m) return null;
  const stream = m[1];
  const index = Number(m[2]);
  const sizes: Record<string, number> = {
    ch: F.channel.videos,
    pl: F.playlist.items,
    sr: F.searchResults,
    tr: F.trendingResults,
    cd: 2,
    sh: F.channel.shorts,
  };
  return index < (sizes[stream] ?? 0) ? { stream, index } : null;
}

function video(id: string) {
  const known = knownVideo(id);
  const stream = known?.stream ?? 'ch';
  const index = known?.index ?? 0;
  const own = stream === 'ch' || stream === 'cd' || stream === 'sh';
  const title = `${sentence(`${id}:t`, 5)} #${['vlog', 'howto', 'music'][hash(id) % 3]}`;
  return {
    kind: 'youtube#video',
    etag: `e${hash(id)}`,
    id,
    snippet: {
      publishedAt: iso(T0 - (index + 1) * 86_400_000 - (STREAMS[stream] ?? 0) * 3_600_000),
      channelId: own ? F.channel.id : `UCother${String(hash(id)).padStart(17, '0')}`,
      title,
      description: `${sentence(`${id}:d`, 12)} #fake`,
      thumbnails: { default: { url: `https://i.ytimg.com/vi/${id}/default.jpg`, width: 120, height: 90 } },
      channelTitle: own ? F.channel.title : `Channel ${hash(id) % 1000}`,
      tags: ['fake', 'fixture'],
      categoryId: '22',
      liveBroadcastContent: 'none',
    },
    contentDetails: {
      duration: `PT${pick(`${id}:m`, 0, 20)}M${pick(`${id}:s`, 1, 59)}S`,
      dimension: '2d',
      definition: 'hd',
      caption: 'false',
    },
    // Counts are strings in the Data API.
    statistics: {
      viewCount: String(pick(`${id}:v`, 100, 5_000_000)),
      likeCount: String(pick(`${id}:l`, 0, 100_000)),
      favoriteCount: '0',
      commentCount: String(pick(`${id}:c`, 0, 5000)),
    },
  };
}

function channel() {
  const c = F.channel;
  return {
    kind: 'youtube#channel',
    etag: 'channel-etag',
    id: c.id,
    snippet: {
      title: c.title,
      description: 'Videos about fixtures and fakes.',
      customUrl: `@${c.handle}`,
      publishedAt: '2015-03-01T10:00:00Z',
      thumbnails: { high: { url: `https://yt3.ggpht.com/${c.id}=s800`, width: 800, height: 800 } },
      country: 'US',
    },
    contentDetails: { relatedPlaylists: { likes: '', uploads: `UU${c.id.slice(2)}` } },
    statistics: { viewCount: '123456789', subscriberCount: '98700', hiddenSubscriberCount: false, videoCount: String(c.videos) },
  };
}

function list(kind: string, items: unknown[], offset: number, size: number, total: number): FakeResponse {
  const next = offset + size < total ? encodeToken('yt', offset + size) : undefined;
  return {
    status: 200,
    body: {
      kind,
      etag: `l${offset}`,
      ...(next ? { nextPageToken: next } : {}),
      pageInfo: { totalResults: total, resultsPerPage: size },
      items,
    },
  };
}

function pageArgs(req: FakeRequest, max: number, dflt: number): { offset: number; size: number } | FakeResponse {
  const size = req.query.maxResults === undefined ? dflt : Number(req.query.maxResults);
  if (!Number.isInteger(size) || size < 0 || size > max) {
    return error(400, 'invalidParameter', `Invalid value for parameter maxResults: must be between 0 and ${max}.`, 'youtube.parameter');
  }
  const offset = decodeToken('yt', req.query.pageToken);
  if (offset === null) return error(400, 'invalidPageToken', 'The request specifies an invalid page token.', 'youtube.parameter');
  return { offset, size };
}

export function createYouTubeApi(): FakeApi {
  function handle(req: FakeRequest): FakeResponse {
    const key = req.query.key ?? (req.headers['x-goog-api-key'] as string | undefined);
    if (!key)
      return error(
        403,
        'forbidden',
        "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
        'global',
      );
    if (key === F.badKey) return KEY_INVALID;
    const route = req.path.slice(PREFIX.length);
    const q = req.query;
    const given = Object.fromEntries(Object.entries(q).filter(([k]) => k !== 'key'));
    const problem = youtubeQueryProblems(route, given)[0];
    if (problem?.kind === 'parameter' && route !== problem.name) return unknownParameter(problem.name);
    if (problem?.kind === 'part') return error(400, 'unknownPart', `'${problem.name}'`, 'youtube.part');
    switch (route) {
      case '/channels': {
        const c = F.channel;
        const hit =
          (q.forHandle && q.forHandle.replace(/^@/, '').toLowerCase() === c.handle) ||
          (q.id && q.id.split(',').includes(c.id)) ||
          (q.forUsername && q.forUsername.toLowerCase() === c.handle);
        // Unknown channels answer 200 with no items.
        return {
          status: 200,
          body: {
            kind: 'youtube#channelListResponse',
            etag: 'c',
            pageInfo: { totalResults: hit ? 1 : 0, resultsPerPage: 5 },
            ...(hit ? { items: [channel()] } : {}),
          },
        };
      }
      case '/playlistItems': {
        const id = q.playlistId ?? '';
        const args = pageArgs(req, 50, 5);
        if ('status' in args) return args;
        if (id === F.privatePlaylist)
          return error(403, 'playlistItemsNotAccessible', 'The request is not properly authorized to retrieve the specified playlist.');
        let stream: string;
        let total: number;
        if (id === `UU${F.channel.id.slice(2)}`) [stream, total] = ['ch', F.channel.videos];
        else if (id === `UUSH${F.channel.id.slice(2)}`) [stream, total] = ['sh', F.channel.shorts];
        else if (id === F.playlist.id) [stream, total] = ['pl', F.playlist.items];
        else
          return error(
            404,
            'playlistNotFound',
            "The playlist identified with the request's <code>playlistId</code> parameter cannot be found.",
          );
        const items = [];
        for (let i = args.offset; i < Math.min(total, args.offset + args.size); i++) {
          const videoId = videoIdOf(stream, i);
          items.push({
            kind: 'youtube#playlistItem',
            etag: `pi${i}`,
            id: `PI${id}${i}`,
            snippet: { playlistId: id, position: i, title: video(videoId).snippet.title, resourceId: { kind: 'youtube#video', videoId } },
            contentDetails: { videoId, videoPublishedAt: video(videoId).snippet.publishedAt },
          });
        }
        return list('youtube#playlistItemListResponse', items, args.offset, args.size, total);
      }
      case '/videos': {
        if (q.chart === 'mostPopular') {
          if (!/^[A-Z]{2}$/.test(q.regionCode ?? '') || q.regionCode === 'ZZ')
            return error(400, 'invalidRegionCode', 'The regionCode parameter specifies an invalid region code.', 'youtube.parameter');
          const args = pageArgs(req, 50, 5);
          if ('status' in args) return args;
          const items = [];
          for (let i = args.offset; i < Math.min(F.trendingResults, args.offset + args.size); i++) items.push(video(videoIdOf('tr', i)));
          return list('youtube#videoListResponse', items, args.offset, args.size, F.trendingResults);
        }
        const ids = (q.id ?? '').split(',').filter(Boolean);
        if (ids.length > 50) return error(400, 'invalidParameter', 'Too many IDs.', 'youtube.parameter');
        // Unknown or private videos are simply absent from items.
        const items = ids.filter((id) => knownVideo(id)).map(video);
        return {
          status: 200,
          body: {
            kind: 'youtube#videoListResponse',
            etag: 'v',
            pageInfo: { totalResults: items.length, resultsPerPage: items.length },
            items,
          },
        };
      }
      case '/commentThreads': {
        const id = q.videoId ?? '';
        const args = pageArgs(req, 100, 20);
        if ('status' in args) return args;
        if (id === F.commentsDisabledVideo)
          return error(
            403,
            'commentsDisabled',
            'The video identified by the <code><a href="/youtube/v3/docs/commentThreads/list#videoId">videoId</a></code> parameter has disabled comments.',
          );
        if (!knownVideo(id))
          return error(
            404,
            'videoNotFound',
            'The video identified by the <code><a href="/youtube/v3/docs/commentThreads/list#videoId">videoId</a></code> parameter could not be found.',
          );
        const items = [];
        for (let i = args.offset; i < Math.min(F.commentsPerVideo, args.offset + args.size); i++) {
          const cid = `Ug${id}c${String(i).padStart(5, '0')}`;
          items.push({
            kind: 'youtube#commentThread',
            etag: `ct${i}`,
            id: cid,
            snippet: {
              channelId: F.channel.id,
              videoId: id,
              topLevelComment: {
                kind: 'youtube#comment',
                etag: `c${i}`,
                id: cid,
                snippet: {
                  channelId: F.channel.id,
                  videoId: id,
                  textDisplay: sentence(`${cid}:x`, 7),
                  textOriginal: sentence(`${cid}:x`, 7),
                  authorDisplayName: `@viewer${hash(cid) % 10_000}`,
                  authorChannelId: { value: `UCviewer${String(hash(cid)).padStart(16, '0')}` },
                  canRate: true,
                  viewerRating: 'none',
                  likeCount: pick(`${cid}:l`, 0, 500),
                  publishedAt: iso(T0 - i * 600_000),
                  updatedAt: iso(T0 - i * 600_000),
                },
              },
              canReply: true,
              totalReplyCount: pick(`${cid}:r`, 0, 12),
              isPublic: true,
            },
          });
        }
        return list('youtube#commentThreadListResponse', items, args.offset, args.size, F.commentsPerVideo);
      }
      case '/search': {
        const args = pageArgs(req, 50, 5);
        if ('status' in args) return args;
        if (q.type === 'channel') {
          // Channels named like the query: the fixture channel when its title matches.
          const squash = (t: string): string => t.toLowerCase().replace(/[^a-z0-9]/g, '');
          const hit = squash(q.q ?? '') !== '' && squash(F.channel.title).includes(squash(q.q ?? ''));
          const c = channel();
          const items = hit
            ? [
                {
                  kind: 'youtube#searchResult',
                  etag: 'sc',
                  id: { kind: 'youtube#channel', channelId: c.id },
                  snippet: {
                    publishedAt: c.snippet.publishedAt,
                    channelId: c.id,
                    title: c.snippet.title,
                    description: c.snippet.description,
                    channelTitle: c.snippet.title,
                    liveBroadcastContent: 'none',
                  },
                },
              ]
            : [];
          return list('youtube#searchListResponse', items, 0, args.size, items.length);
        }
        const total = (q.q ?? '').includes(FIXTURES.emptyQueryWord) ? 0 : F.searchResults;
        const items = [];
        for (let i = args.offset; i < Math.min(total, args.offset + args.size); i++) {
          const v = video(videoIdOf('sr', i));
          // SearchResultSnippet: a subset of the video snippet (no tags, no categoryId).
          const { publishedAt, channelId, title, description, thumbnails, channelTitle, liveBroadcastContent } = v.snippet;
          items.push({
            kind: 'youtube#searchResult',
            etag: `s${i}`,
            id: { kind: 'youtube#video', videoId: v.id },
            snippet: { publishedAt, channelId, title, description, thumbnails, channelTitle, liveBroadcastContent },
          });
        }
        return list('youtube#searchListResponse', items, args.offset, args.size, total);
      }
      case '/playlists': {
        const hit = q.id === F.playlist.id;
        const items = hit
          ? [
              {
                kind: 'youtube#playlist',
                etag: 'p',
                id: F.playlist.id,
                snippet: {
                  publishedAt: '2020-01-01T00:00:00Z',
                  channelId: F.channel.id,
                  title: 'Fake playlist',
                  description: 'All the fixtures.',
                  channelTitle: F.channel.title,
                },
                contentDetails: { itemCount: F.playlist.items },
              },
            ]
          : [];
        return {
          status: 200,
          body: { kind: 'youtube#playlistListResponse', etag: 'pl', pageInfo: { totalResults: items.length, resultsPerPage: 5 }, items },
        };
      }
    }
    return error(404, 'notFound', 'Not Found', 'global');
  }

  function misbehave(rule: MisbehaveRule): FakeResponse {
    const retry = rule.retryAfterSeconds !== undefined ? { 'retry-after': String(rule.retryAfterSeconds) } : undefined;
    switch (rule.kind) {
      case 'rate_limit':
        return {
          ...error(429, 'rateLimitExceeded', 'The request cannot be completed because you have exceeded your quota.', 'youtube.quota'),
          headers: retry,
        };
      case 'quota':
        return error(
          403,
          'quotaExceeded',
          'The request cannot be completed because you have exceeded your <a href="/youtube/v3/getting-started#quota">quota</a>.',
          'youtube.quota',
        );
      case 'errors_200':
        return { status: 200, body: { kind: 'youtube#channelListResponse', etag: 'e', pageInfo: { totalResults: 0, resultsPerPage: 5 } } };
      case 'token_invalid':
        return KEY_INVALID;
      default:
        return { ...error(rule.status ?? 503, 'backendError', 'The service is currently unavailable.', 'global'), headers: retry };
    }
  }

  return { name: 'youtube', matches: (p) => p.startsWith(`${PREFIX}/`), handle, misbehave };
}
