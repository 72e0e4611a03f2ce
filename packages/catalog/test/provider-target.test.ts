import { CASE_SENSITIVE_QUERIES, normalizeTarget, providerTarget } from '../src';

/**
 * A search query goes to the provider as the user wrote it: X's query language needs OR in
 * capitals ("cats OR dogs" is not "cats or dogs"). The cache and dedup key keeps the case on
 * platforms whose operators are case-sensitive (X) and folds it on the others.
 */
describe('providerTarget', () => {
  it('on X the query keeps its case for the provider and for the key', () => {
    const check = normalizeTarget('twitter', 'query', '  cats   OR dogs ');
    expect(check).toEqual({ ok: true, normalized: 'cats OR dogs' });
    expect(normalizeTarget('twitter', 'query', 'cats or dogs')).toEqual({ ok: true, normalized: 'cats or dogs' });
    expect(providerTarget('query', '  cats OR dogs ', 'cats OR dogs')).toBe('cats OR dogs');
  });

  it('on platforms whose search ignores case the key folds it', () => {
    expect([...CASE_SENSITIVE_QUERIES]).toEqual(['twitter']);
    for (const platform of ['youtube', 'tiktok', 'instagram', 'facebook'] as const) {
      expect(normalizeTarget(platform, 'query', '  Cats   OR Dogs ')).toEqual({ ok: true, normalized: 'cats or dogs' });
    }
    expect(providerTarget('query', '  Cats OR Dogs ', 'cats or dogs')).toBe('Cats OR Dogs');
  });

  it('other kinds hand the normalized form to the provider', () => {
    expect(providerTarget('username', '@NASA', 'nasa')).toBe('nasa');
    expect(providerTarget('hashtag', '#Cats', 'cats')).toBe('cats');
  });
});
