/**
 * Fake X API v2 under /2.
 * Paths, parameters, field enums and response bodies follow X's OpenAPI document
 * (references/x-openapi.json): a query parameter or field value the document does not name is
 * answered 400 invalid-request, with the problem type at the top level and errors[] items of
 * {message, parameters} (InvalidRequestProblem). Shapes also follow https://docs.x.com/x-api/users/lookup (data, errors), /x-api/users/follows,
 * /x-api/posts/timelines, /x-api/posts/search (meta{result_count, next_token}; search takes
 * next_token, timelines and follows take pagination_token), problem bodies of
 * https://docs.x.com/x-api/fundamentals/response-codes-and-errors and the x-rate-limit-limit,
 * -remaining, -reset headers of https://docs.x.com/x-api/fundamentals/rate-limits.
 */
import { FIXTURES } from './fixtures';
import { xQueryProblems } from './reference';
import {
  bearer,
  decodeToken,
  encodeToken,
  hash,
  iso,
  pick,
  sentence,
  type FakeApi,
  type Forms,
  type FakeRequest,
  type FakeResponse,
  type MisbehaveRule,
} from './util';

/** Forms of the fake handling the current request (set by its handle). */
let forms: Forms | null = null;
const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/**
 * A tweet's created_at: ISO 8601 in the field table (format date-time), the v1.1 form
 * "Wed Jan 06 18:40:40 +0000 2021" in the published Tweet example of the same document.
 */
function createdAt(ms: number): string {
  if (!forms?.example('x.created_at')) return iso(ms);
  const d = new Date(ms);
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000 ${d.getUTCFullYear()}`;
}

const F = FIXTURES.x;
const T0 = Math.floor(Date.now() / 3_600_000) * 3_600_000;
const PROBLEM = 'https://api.twitter.com/2/problems/';

function problem(status: number, title: string, detail: string, type = 'about:blank'): FakeResponse {
  return { status, body: { title, detail, type, status } };
}

/** InvalidRequestProblem: the type is top-level; errors[] items carry message and parameters, no type. */
function invalid(message: string, parameter = 'query', value = ''): FakeResponse {
  return {
    status: 400,
    body: {
      errors: [{ parameters: { [parameter]: [value] }, message }],
      title: 'Invalid Request',
      detail: 'One or more parameters to your request was invalid.',
      type: `${PROBLEM}invalid-request`,
    },
  };
}

function notFound(resourceType: string, parameter: string, value: string, detail: string): FakeResponse {
  return {
    status: 200,
    body: {
      errors: [
        {
          value,
          detail,
          title: 'Not Found Error',
          resource_type: resourceType,
          parameter,
          resource_id: value,
          type: `${PROBLEM}resource-not-found`,
        },
      ],
    },
  };
}

function notAuthorized(id: string): FakeResponse {
  return {
    status: 200,
    body: {
      errors: [
        {
          value: id,
          detail: `Sorry, you are not authorized to see the user with id: [${id}].`,
          title: 'Authorization Error',
          resource_type: 'user',
          parameter: 'id',
          resource_id: id,
          section: 'data',
          type: `${PROBLEM}not-authorized-for-resource`,
        },
      ],
    },
  };
}

function userObject(username: string, id: string, index = 0, protectedUser = false) {
  const main = id === F.user.id;
  return {
    id,
    username,
    name: main ? F.user.name : `Person ${index}`,
    created_at: iso(T0 - (index + 100) * 86_400_000),
    description: sentence(`${id}:bio`, 6),
    profile_image_url: `https://pbs.twimg.com/profile_images/${id}/photo_normal.jpg`,
    verified: main,
    protected: protectedUser,
    public_metrics: main
      ? {
          followers_count: F.user.followers,
          following_count: F.user.following,
          tweet_count: F.user.tweets,
          listed_count: 12,
          like_count: 3400,
        }
      : {
          followers_count: pick(`${id}:f`, 0, 5000),
          following_count: pick(`${id}:g`, 0, 900),
          tweet_count: pick(`${id}:t`, 0, 9000),
          listed_count: 0,
          like_count: 10,
        },
  };
}

/** Post IDs: "18", a stream digit and a 16-digit index, so any can be looked up. */
const tweetIdOf = (stream: number, index: number): string => `18${stream}${String(index).padStart(16, '0')}`;

/** Whether a post is a long one (beyond 280 characters): every seventh of each stream, and post 3 of the user. */
export const isLongTweet = (id: string): boolean => {
  const m = /^18(\d)(\d{16})$/.exec(id);
  return Number(m?.[2] ?? 0) % 7 === 3;
};

/**
 * A long post's whole text (356 characters, its hashtag last, as in the issue's reproduction):
 * `text` carries its first 280 characters and `entities` only what lies in them; the whole text
 * and all its entities are in note_tweet, sent only when tweet.fields asks for note_tweet (X's
 * OpenAPI document, Tweet.note_tweet).
 */
export function longTweetText(id: string, tag: string): string {
  let body = sentence(`${id}:long`, 12);
  while (body.length < 356 - tag.length - 2) body += ` ${sentence(`${id}:long${body.length}`, 4)}`;
  return `${body
    .slice(0, 356 - tag.length - 2)
    .trimEnd()
    .padEnd(356 - tag.length - 2, '.')} #${tag}`;
}

function tweetObject(id: string, fields: string[] = []) {
  const m = /^18(\d)(\d{16})$/.exec(id);
  const stream = Number(m?.[1] ?? 0);
  const index = Number(m?.[2] ?? 0);
  const authorId = stream === 0 ? F.user.id : `15${String(hash(id) % 1000).padStart(17, '0')}`;
  const tag = ['news', 'tech', 'fake'][hash(id) % 3];
  const long = isLongTweet(id) ? longTweetText(id, tag) : null;
  const hashtag = (text: string) => ({ start: text.length - tag.length - 1, end: text.length, tag });
  const short = `${sentence(`${id}:t`, 9)} #${tag}`;
  return {
    tweet: {
      id,
      text: long ? `${long.slice(0, 279)}…` : short,
      ...(long && fields.includes('note_tweet') ? { note_tweet: { text: long, entities: { hashtags: [hashtag(long)] } } } : {}),
      edit_history_tweet_ids: [id],
      created_at: createdAt(T0 - index * 3_600_000 - stream * 60_000),
      author_id: authorId,
      conversation_id: id,
      lang: 'en',
      ...(long ? {} : { entities: { hashtags: [hashtag(short)] } }),
      public_metrics: {
        retweet_count: pick(`${id}:r`, 0, 900),
        reply_count: pick(`${id}:p`, 0, 300),
        like_count: pick(`${id}:l`, 0, 9000),
        quote_count: 1,
        bookmark_count: 2,
        impression_count: pick(`${id}:i`, 100, 900_000),
      },
    },
    author: stream === 0 ? userObject(F.user.username, F.user.id) : userObject(`author${hash(id) % 1000}`, authorId, hash(id) % 1000),
  };
}

function knownTweet(id: string): boolean {
  const m = /^18(\d)(\d{16})$/.exec(id);
  if (!m) return false;
  const total = m[1] === '0' ? F.user.tweets : m[1] === '1' ? F.searchResults : 0;
  return Number(m[2]) < total;
}

const tweetFields = (req: FakeRequest): string[] => (req.query['tweet.fields'] ?? '').split(',');

function tweetsPage(ids: string[], offset: number, size: number, total: number, tokenParam: string, fields: string[]): FakeResponse {
  const found = ids.map((id) => tweetObject(id, fields));
  const users = new Map(found.map((f) => [f.author.id, { id: f.author.id, username: f.author.username, name: f.author.name }]));
  const next = offset + size < total ? encodeToken(tokenParam, offset + size) : undefined;
  return {
    status: 200,
    body: {
      ...(found.length > 0 ? { data: found.map((f) => f.tweet), includes: { users: [...users.values()] } } : {}),
      meta: {
        result_count: found.length,
        ...(found[0] ? { newest_id: found[0].tweet.id, oldest_id: found[found.length - 1]?.tweet.id } : {}),
        ...(next ? { next_token: next } : {}),
      },
    },
  };
}

function range(req: FakeRequest, min: number, max: number, dflt: number): number | FakeResponse {
  const raw = req.query.max_results;
  const n = raw === undefined ? dflt : Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    return invalid(`The \`max_results\` query parameter value [${raw}] is not between ${min} and ${max}`, 'max_results', String(raw));
  return n;
}

export function createXApi(mode: Forms | null = null): FakeApi {
  let remaining = 900;

  function rateHeaders(): Record<string, string> {
    remaining = Math.max(0, remaining - 1);
    return {
      'x-rate-limit-limit': '900',
      'x-rate-limit-remaining': String(remaining),
      'x-rate-limit-reset': String(Math.floor(Date.now() / 1000) + 900),
    };
  }

  function route(req: FakeRequest): FakeResponse {
    const token = bearer(req);
    if (!token || token === F.badToken) return problem(401, 'Unauthorized', 'Unauthorized');
    const p = req.path;
    const problems = xQueryProblems(p, req.query);
    if (problems.length > 0 && !problems[0]?.message.startsWith('no X operation')) {
      const first = problems[0];
      return invalid(first.message, first.parameter, first.value);
    }
    let m: RegExpExecArray | null;
    if ((m = /^\/2\/users\/by\/username\/([^/]+)$/.exec(p))) {
      const u = decodeURIComponent(m[1]).toLowerCase();
      if (u === F.user.username) return { status: 200, body: { data: userObject(F.user.username, F.user.id) } };
      if (u === F.protectedUser.username)
        return { status: 200, body: { data: userObject(F.protectedUser.username, F.protectedUser.id, 1, true) } };
      return notFound('user', 'username', u, `Could not find user with username: [${u}].`);
    }
    if ((m = /^\/2\/users\/(\d+)\/(followers|following|tweets)$/.exec(p))) {
      const [, id, edge] = m as unknown as [string, string, string];
      if (id === F.protectedUser.id) return notAuthorized(id);
      if (id !== F.user.id) return notFound('user', 'id', id, `Could not find user with id: [${id}].`);
      const offset = decodeToken('x', req.query.pagination_token);
      if (offset === null)
        return invalid('The `pagination_token` query parameter value is not valid', 'pagination_token', String(req.query.pagination_token));
      if (edge === 'tweets') {
        const size = range(req, 5, 100, 10);
        if (typeof size !== 'number') return size;
        const ids = [];
        for (let i = offset; i < Math.min(F.user.tweets, offset + size); i++) ids.push(tweetIdOf(0, i));
        return tweetsPage(ids, offset, size, F.user.tweets, 'x', tweetFields(req));
      }
      const size = range(req, 1, 1000, 100);
      if (typeof size !== 'number') return size;
      const total = edge === 'followers' ? F.user.followers : F.user.following;
      const data = [];
      for (let i = offset; i < Math.min(total, offset + size); i++) {
        const uid = `16${edge === 'followers' ? 0 : 1}${String(i).padStart(16, '0')}`;
        data.push(userObject(`${edge === 'followers' ? 'follower' : 'followed'}${i}`, uid, i));
      }
      const next = offset + size < total ? encodeToken('x', offset + size) : undefined;
      return { status: 200, body: { data, meta: { result_count: data.length, ...(next ? { next_token: next } : {}) } } };
    }
    if (p === '/2/tweets/search/recent') {
      if (!req.query.query) return invalid('The `query` query parameter can not be empty', 'query', '');
      const size = range(req, 10, 100, 10);
      if (typeof size !== 'number') return size;
      const offset = decodeToken('x', req.query.next_token);
      if (offset === null)
        return invalid('The `next_token` query parameter value is not valid', 'next_token', String(req.query.next_token));
      const total = req.query.query.includes(FIXTURES.emptyQueryWord) ? 0 : F.searchResults;
      const ids = [];
      for (let i = offset; i < Math.min(total, offset + size); i++) ids.push(tweetIdOf(1, i));
      return tweetsPage(ids, offset, size, total, 'x', tweetFields(req));
    }
    if ((m = /^\/2\/tweets\/(\d+)$/.exec(p))) {
      const id = m[1];
      if (!knownTweet(id)) return notFound('tweet', 'id', id, `Could not find tweet with id: [${id}].`);
      const t = tweetObject(id, tweetFields(req));
      return {
        status: 200,
        body: { data: t.tweet, includes: { users: [{ id: t.author.id, username: t.author.username, name: t.author.name }] } },
      };
    }
    return problem(404, 'Not Found Error', 'Not Found');
  }

  function handle(req: FakeRequest): FakeResponse {
    // The module's helpers read `forms`: the (synchronous) handling of a request uses this fake's.
    forms = mode;
    const answer = route(req);
    return { ...answer, headers: { ...rateHeaders(), ...(answer.headers ?? {}) } };
  }

  function misbehave(rule: MisbehaveRule): FakeResponse {
    const reset = String(Math.floor(Date.now() / 1000) + (rule.resetInSeconds ?? 60));
    const limitHeaders = { 'x-rate-limit-limit': '900', 'x-rate-limit-remaining': '0', 'x-rate-limit-reset': reset };
    switch (rule.kind) {
      case 'rate_limit':
        return { ...problem(429, 'Too Many Requests', 'Too Many Requests'), headers: limitHeaders };
      case 'quota':
        return {
          status: 429,
          headers: limitHeaders,
          body: {
            title: 'UsageCapExceeded',
            detail: 'Usage cap exceeded: Monthly product cap',
            type: `${PROBLEM}usage-capped`,
            period: 'Monthly',
            scope: 'Product',
          },
        };
      case 'credits':
        // Pay-per-use balance exhausted: HTTP 402 with title CreditsDepleted (not in the OpenAPI
        // document; body as reported by callers of the live API, type URI not verified).
        return {
          status: 402,
          body: {
            title: 'CreditsDepleted',
            detail: 'Your enrolled account does not have any credits to fulfill this request.',
            type: `${PROBLEM}credits-depleted`,
          },
        };
      case 'errors_200':
        return notFound('user', 'username', 'unknown', 'Could not find user with username: [unknown].');
      case 'token_invalid':
        return problem(401, 'Unauthorized', 'Unauthorized');
      default:
        return problem(rule.status ?? 503, 'Service Unavailable', 'Service Unavailable');
    }
  }

  return {
    name: 'x',
    matches: (p) => p.startsWith('/2/'),
    handle,
    misbehave,
    reset() {
      remaining = 900;
    },
  };
}
