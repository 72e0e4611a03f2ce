import { normalizeTarget, providerTarget } from '../src';

/**
 * A search query is lower-cased for the cache and dedup key, but the provider gets it as the
 * user wrote it: X's query language needs OR in capitals ("cats OR dogs" is not "cats or dogs").
 */
describe('providerTarget', () => {
  it('a query keeps its case for the provider, while the key form is lower-cased', () => {
    const check = normalizeTarget('twitter', 'query', '  cats OR dogs ');
    expect(check).toEqual({ ok: true, normalized: 'cats or dogs' });
    expect(providerTarget('query', '  cats OR dogs ', 'cats or dogs')).toBe('cats OR dogs');
  });

  it('other kinds hand the normalized form to the provider', () => {
    expect(providerTarget('username', '@NASA', 'nasa')).toBe('nasa');
    expect(providerTarget('hashtag', '#Cats', 'cats')).toBe('cats');
  });
});
