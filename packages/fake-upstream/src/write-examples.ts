/**
 * Extracts the example replies the machine-readable references carry into
 * references/examples/<source>.json, so the examples test (packages/providers/test/examples.test.ts)
 * replays them to the adapters. Run: npx tsx packages/fake-upstream/src/write-examples.ts
 *
 * - x.json: the `example` of each response schema the X adapter reads (User, Tweet) of
 *   x-openapi.json, wrapped as the endpoint's documented reply ({data: …}).
 * - scrapecreators.json: the `sampleResponse` of each endpoint of scrapecreators-endpoints.json.
 *
 * TikTok, Meta and YouTube publish no machine-readable examples: their example replies are
 * transcribed by hand into tiktok.json, meta-graph.json and youtube.json, each with its page.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ReferenceExample } from './examples';

type Json = Record<string, unknown>;

const DIR = join(__dirname, '..', 'references');
const read = (name: string): Json => JSON.parse(readFileSync(join(DIR, name), 'utf8')) as Json;
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});

type Example = ReferenceExample;

/** X's documented error replies (docs.x.com/x-api/fundamentals/response-codes-and-errors), transcribed: the OpenAPI document has none. */
const XERRORS = 'https://docs.x.com/x-api/fundamentals/response-codes-and-errors';
const X_ERRORS: Example[] = [
  {
    id: 'x.error.unauthorized',
    page: XERRORS,
    endpoint: '/2/users/by/username/{username}',
    status: 401,
    expect_error: 'upstream_auth',
    body: { title: 'Unauthorized', type: 'about:blank', status: 401, detail: 'Unauthorized' },
  },
  {
    id: 'x.error.client-forbidden',
    page: XERRORS,
    endpoint: '/2/users/by/username/{username}',
    status: 403,
    expect_error: 'upstream_auth',
    body: {
      client_id: '101010101',
      required_enrollment: 'Appropriate Level of API Access',
      registration_url: 'https://developer.twitter.com/en/portal/product',
      title: 'Client Forbidden',
      detail:
        'This request must be made using an approved developer account that is enrolled in the requested endpoint. Learn more by visiting our documentation.',
      reason: 'client-not-enrolled',
      type: 'https://api.twitter.com/2/problems/client-forbidden',
    },
  },
  {
    id: 'x.error.too-many-requests',
    page: XERRORS,
    endpoint: '/2/users/by/username/{username}',
    status: 429,
    expect_error: 'rate_limited',
    body: { title: 'Too Many Requests', detail: 'Too Many Requests', type: 'about:blank', status: 429 },
  },
];

function write(name: string, source: string, examples: Example[]): void {
  const doc = {
    'x-source': { extracted_from: source, tool: 'packages/fake-upstream/src/write-examples.ts', date: '2026-11-27' },
    examples,
  };
  writeFileSync(join(DIR, 'examples', name), `${JSON.stringify(doc, null, 1)}\n`);
}

// ---- X ------------------------------------------------------------------------------------------
const x = read('x-openapi.json');
const schemas = obj(obj(x.components).schemas);
const user = obj(schemas.User).example;
const tweet = obj(schemas.Tweet).example;
const XPAGE = 'x-openapi.json (latest-openapi.json of github.com/xdevplatform/xdk), components.schemas';
write('x.json', 'x-openapi.json', [
  { id: 'x.user', page: `${XPAGE}.User.example`, endpoint: '/2/users/by/username/{username}', status: 200, body: { data: user } },
  { id: 'x.tweet', page: `${XPAGE}.Tweet.example`, endpoint: '/2/tweets/{id}', status: 200, body: { data: tweet } },
  {
    id: 'x.search',
    page: `${XPAGE}.Tweet.example`,
    endpoint: '/2/tweets/search/recent',
    status: 200,
    body: { data: [tweet], meta: { result_count: 1 } },
  },
  ...X_ERRORS,
]);

// ---- the vendor ------------------------------------------------------------------------------------
const vendor = read('scrapecreators-endpoints.json');
write(
  'scrapecreators.json',
  'scrapecreators-endpoints.json',
  Object.entries(vendor)
    .filter(([path]) => !path.startsWith('x-'))
    .map(([path, ep]) => ({
      id: `scrapecreators${path.replace(/\//g, '.')}`,
      page: `scrapecreators-endpoints.json ${path} sampleResponse (api-config/apis.js of github.com/ScrapeCreators/scrapecreators-cli)`,
      endpoint: path,
      status: 200,
      body: obj(ep).sampleResponse,
    })),
);
