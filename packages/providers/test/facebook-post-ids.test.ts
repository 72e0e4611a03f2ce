import { FIXTURES, startFakeUpstream, type FakeUpstream } from '@sdx/fake-upstream';
import { createFacebookPagesProvider, type Provider } from '@sdx/providers';
import { collect, failure, request } from './helpers';

/**
 * A Facebook post URL's IDs become a Graph API path (`/{page}_{post}`): each is checked first
 * (a post ID is digits or pfbid…, a page ID digits), so nothing else reaches the path, and a bad
 * one is invalid_target before any request is sent.
 */
const G = FIXTURES.graph;
let fake: FakeUpstream;
let pages: Provider;

beforeAll(async () => {
  fake = await startFakeUpstream();
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  pages = createFacebookPagesProvider({
    accessToken: 'EAAFAKEgraphAccessToken0123456789ZZ',
    baseUrl: `${fake.url}/${G.version}`,
    retryDelayMs: 10,
  });
});

describe('facebook post URLs', () => {
  it.each([
    'https://www.facebook.com/permalink.php?story_fbid=900000007&id=..%2Fme%2Faccounts',
    'https://www.facebook.com/permalink.php?story_fbid=1%2Fcomments&id=123',
    'https://www.facebook.com/story.php?story_fbid=abc&id=123',
    'https://www.facebook.com/fakepage/posts/me%3Ffields%3Daccess_token',
    'https://www.facebook.com/fakepage/posts/12ab',
    'https://www.facebook.com/fakepage/videos/pfbid',
  ])('refuses %s as invalid_target without calling the Graph API', async (target) => {
    expect(await failure(pages, request('facebook', 'post', target, 1))).toMatchObject({ code: 'invalid_target', retryable: false });
    expect(await failure(pages, request('facebook', 'comments', target, 10))).toMatchObject({ code: 'invalid_target' });
    expect(fake.requests).toEqual([]);
  });

  it('takes a numeric story_fbid with its page ID, and the pfbid form in a posts path', async () => {
    const post = (
      await collect(pages, request('facebook', 'post', `https://www.facebook.com/permalink.php?story_fbid=900000007&id=${G.page.id}`, 1))
    ).items[0];
    expect(post).toMatchObject({ kind: 'post', id: `${G.page.id}_900000007` });
    fake.reset();
    const pfbid = 'pfbid02ipW5E9gFTfRZxHfwpoN5iMmNZU4aKK1HzG8MF2qZjRxVXGHqyV1STdgH8CTQ1Ctwl';
    await failure(pages, request('facebook', 'post', `https://www.facebook.com/fakepage/posts/${pfbid}`, 1)).catch(() => undefined);
    // The ID reached the Graph path as it was (the fake knows no such post).
    expect(fake.requests.map((r) => r.path)).toContain(`/${G.version}/${G.page.id}_${pfbid}`);
  });
});
