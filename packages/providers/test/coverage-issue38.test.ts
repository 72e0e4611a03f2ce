import { FIXTURES, startFakeUpstream, type FakeUpstream } from '@sdx/fake-upstream';
import { coverage, createFacebookPagesProvider, renderCoverage, UNSERVED_REASONS, type CommentItem } from '@sdx/providers';
import { collect, failure, request } from './helpers';

/**
 * Issue 38, item 5: the operations no live source served. Facebook comment replies are served
 * by the Graph API (the Comment node's /comments edge); the other four have no source, and the
 * generated table says why.
 */
const G = FIXTURES.graph;
let fake: FakeUpstream;
beforeAll(async () => {
  fake = await startFakeUpstream();
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

const pages = () => createFacebookPagesProvider({ accessToken: 'fake-graph-token', baseUrl: `${fake.url}/${G.version}`, retryDelayMs: 10 });

describe('facebook comment_replies through the Graph API', () => {
  const commentUrl = `https://www.facebook.com/${G.page.username}/posts/900000003?comment_id=12`;

  it("pages through a comment's replies, each a comment item whose parent is the comment", async () => {
    const { items } = await collect(pages(), request('facebook', 'comment_replies', commentUrl, 35));
    expect(items).toHaveLength(35);
    expect(new Set(items.map((i) => i.id)).size).toBe(35);
    for (const item of items as CommentItem[])
      expect(item).toMatchObject({ kind: 'comment', platform: 'facebook', parent_id: '900000003_12', source: 'official' });
    const calls = fake.requests.filter((r) => r.path.endsWith('/900000003_12/comments'));
    expect(calls.length).toBeGreaterThanOrEqual(1);
    expect(calls[0]?.query.fields).toContain('permalink_url');
  });

  it('stops at the last reply', async () => {
    const { items } = await collect(pages(), request('facebook', 'comment_replies', commentUrl, 200));
    expect(items).toHaveLength(G.page.repliesPerComment);
  });

  it('a URL without comment_id, or whose post is known only by its pfbid form, is an invalid target', async () => {
    expect(
      (await failure(pages(), request('facebook', 'comment_replies', `https://www.facebook.com/${G.page.username}/posts/900000003`, 5)))
        .code,
    ).toBe('invalid_target');
    expect(
      (
        await failure(
          pages(),
          request('facebook', 'comment_replies', `https://www.facebook.com/${G.page.username}/posts/pfbid02abcDEF?comment_id=12`, 5),
        )
      ).code,
    ).toBe('invalid_target');
    expect(fake.requests).toHaveLength(0);
  });
});

describe('coverage', () => {
  it('facebook comment_replies has a live source; the four others say why none has', () => {
    const rows = coverage();
    expect(rows.find((r) => r.platform === 'facebook' && r.operation === 'comment_replies')?.served).toBe('facebook-pages');
    const none = rows.filter((r) => !r.served).map((r) => `${r.platform}.${r.operation}`);
    expect(none.sort()).toEqual(['facebook.profile_analytics', 'instagram.followers', 'instagram.following', 'instagram.stories']);
    const table = renderCoverage(rows);
    for (const key of none) {
      const reason = UNSERVED_REASONS[key];
      expect(reason).toBeTruthy();
      expect(table).toContain(reason);
    }
  });
});
