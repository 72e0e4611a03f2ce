import { normalizeTarget } from '../src';

/** A Facebook post or comment URL is admitted only when the IDs it carries are well formed (they become a Graph path). */
describe('normalizeTarget: facebook post URLs', () => {
  it.each([
    'https://www.facebook.com/nasa/posts/1234567890123456',
    'https://www.facebook.com/nasa/posts/pfbid02ipW5E9gFTfRZxHfwpoN5iMmNZU4aKK1HzG8MF2qZjRxVXGHqyV1STdgH8CTQ1Ctwl',
    'https://www.facebook.com/nasa/videos/1234567890',
    'https://www.facebook.com/permalink.php?story_fbid=1234567890&id=100044561550831',
    'https://m.facebook.com/story.php?story_fbid=pfbid0abcDEF1234567890xyz&id=100044561550831',
    'https://www.facebook.com/nasa/posts/1234567890123456?comment_id=9876543210123',
    'https://fb.watch/abcDEF123/',
    '1234567890_987654321',
  ])('admits %s', (target) => {
    expect(normalizeTarget('facebook', 'content', target)).toMatchObject({ ok: true });
  });

  it.each([
    ['https://www.facebook.com/nasa/posts/me%3Ffields%3Daccess_token', /posts ID is not a valid ID/],
    ['https://www.facebook.com/nasa/posts/12ab', /posts ID is not a valid ID/],
    ['https://www.facebook.com/nasa/videos/%2E%2E%2Fme', /videos ID is not a valid ID/],
    ['https://www.facebook.com/permalink.php?story_fbid=abc&id=1', /story_fbid is not a valid ID/],
    ['https://www.facebook.com/permalink.php?story_fbid=1&id=..%2Fme', /id is not a valid ID/],
    ['https://www.facebook.com/photo.php?fbid=1%2F2', /fbid is not a valid ID/],
    ['https://www.facebook.com/nasa/posts/1?comment_id=x', /comment_id is not a valid ID/],
  ])('refuses %s', (target, reason) => {
    const check = normalizeTarget('facebook', 'content', target);
    expect(check.ok).toBe(false);
    expect(!check.ok && check.reason).toMatch(reason);
  });

  it('checks comment_url targets the same way, and leaves other platforms and kinds alone', () => {
    expect(normalizeTarget('facebook', 'comment_url', 'https://www.facebook.com/nasa/posts/1?comment_id=2')).toMatchObject({ ok: true });
    expect(normalizeTarget('facebook', 'comment_url', 'https://www.facebook.com/nasa/posts/1?reply_comment_id=x').ok).toBe(false);
    expect(normalizeTarget('facebook', 'ad', 'https://www.facebook.com/ads/library/?id=123').ok).toBe(true);
    expect(normalizeTarget('youtube', 'content', 'https://www.youtube.com/watch?v=dQw4w9WgXcQ').ok).toBe(true);
  });
});
