import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CATALOG, PLATFORMS } from '@sdx/catalog';
import { ADAPTERS, COVERAGE_MARKERS, coverage, liveProviders, FULL_ENV, withGeneratedSections } from '@sdx/providers';

const DOC = join(__dirname, '..', '..', '..', 'docs', 'providers.md');

describe('docs/providers.md coverage and error tables', () => {
  it('match the provider registry (rewrite with npx tsx packages/providers/src/write-coverage.ts)', () => {
    const doc = readFileSync(DOC, 'utf8');
    expect(doc).toContain(COVERAGE_MARKERS[0]);
    expect(withGeneratedSections(doc)).toBe(doc);
  });

  it('cover every catalog operation once, and name every adapter the registry holds', () => {
    const rows = coverage();
    expect(rows).toHaveLength(PLATFORMS.reduce((n, p) => n + CATALOG[p].length, 0));
    expect(rows).toHaveLength(55);
    const live = liveProviders(FULL_ENV);
    for (const platform of PLATFORMS) for (const p of live[platform]) expect(Object.keys(ADAPTERS)).toContain(p.name);
    // Official first by default: the vendor serves only what no official adapter offers.
    for (const r of rows) expect(r.served).toBe(r.official ?? r.vendor);
    expect(rows.filter((r) => r.served).length).toBe(51);
  });

  it('a stale table fails the comparison', () => {
    const doc = readFileSync(DOC, 'utf8');
    const stale = doc.replace('| youtube | shorts | YouTube Data API v3 |', '| youtube | shorts | none (sandbox only) |');
    expect(stale).not.toBe(doc);
    expect(withGeneratedSections(stale)).not.toBe(stale);
  });
});
