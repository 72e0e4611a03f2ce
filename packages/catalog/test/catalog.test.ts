import { CATALOG, OPERATION_NAMES, PLATFORMS, costOf, findOperation } from '../src';

describe('catalog', () => {
  it('has the 55 operations and 27 operation names', () => {
    expect(PLATFORMS.reduce((n, p) => n + CATALOG[p].length, 0)).toBe(55);
    expect(OPERATION_NAMES).toHaveLength(27);
  });
  it('prices flat and per-result operations', () => {
    const hl = findOperation('instagram', 'highlights')!;
    expect([costOf(hl, 0), costOf(hl, 1), costOf(hl, 50)]).toEqual([0, 10, 10]);
    const f = findOperation('twitter', 'followers')!;
    expect(costOf(f, 25000)).toBe(50000);
  });
});
