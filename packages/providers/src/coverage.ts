/**
 * The coverage of the catalog by live sources, computed from the provider registry itself, and
 * its rendering for docs/providers.md (a test fails when the document and this disagree; rewrite
 * it with `npx tsx packages/providers/src/write-coverage.ts`).
 */
import { CATALOG, PLATFORMS, type Platform } from '@sdx/catalog';
import { createProviderRegistry } from './registry';
import { liveProviders, routeOrders, routeProviders } from './live';
import type { Provider } from './types';
import type { UpstreamProvider } from './upstream/provider';

/** What the document says about each adapter: credentials, licence and limits. */
export const ADAPTERS: Record<string, { label: string; credentials: string; licence: string; limits: string }> = {
  'youtube-data-api': {
    label: 'YouTube Data API v3',
    credentials: '`YOUTUBE_API_KEY`',
    licence: 'YouTube API Services Terms',
    limits: '10,000 quota units a day; search 100 units a call',
  },
  'x-api-v2': {
    label: 'X API v2',
    credentials: '`X_BEARER_TOKEN`',
    licence: 'X Developer Agreement',
    limits: 'per-endpoint 15-minute windows; pay-per-use credits or monthly cap',
  },
  'tiktok-research-api': {
    label: 'TikTok Research / Commercial Content API',
    credentials: '`TIKTOK_CLIENT_KEY`, `TIKTOK_CLIENT_SECRET`, `TIKTOK_RESEARCH_ELIGIBLE=1`',
    licence: 'licensed to approved researchers only, not to commercial products',
    limits: '1,000 requests a day; 30-day windows',
  },
  'meta-ad-library': {
    label: 'Meta Ad Library API',
    credentials: '`META_ACCESS_TOKEN`',
    licence: 'Meta Platform Terms; Ad Library access',
    limits: 'Graph throttling (X-Business-Use-Case-Usage)',
  },
  'facebook-pages': {
    label: 'Facebook Pages (Graph API)',
    credentials: '`FACEBOOK_ACCESS_TOKEN` or `META_ACCESS_TOKEN`',
    licence: 'Page Public Content Access feature',
    limits: 'Graph throttling',
  },
  'instagram-graph': {
    label: 'Instagram Graph API',
    credentials: '`INSTAGRAM_BUSINESS_ACCOUNT_ID` + token',
    licence: 'Meta Platform Terms; business and creator accounts only',
    limits: '200 calls an hour per account; 30 hashtags a week',
  },
  scrapecreators: {
    label: 'ScrapeCreators (vendor)',
    credentials: '`SCRAPECREATORS_API_KEY`',
    licence: 'commercial vendor terms; the vendor collects public data itself',
    limits: '1 credit a request (more for some endpoints); vendor page sizes',
  },
};

/** Every variable and flag set, so every adapter the code has is in the registry. */
export const FULL_ENV: NodeJS.ProcessEnv = {
  PROVIDER_MODE: 'live',
  YOUTUBE_API_KEY: 'x',
  YOUTUBE_SHORTS_PLAYLIST: '1',
  X_BEARER_TOKEN: 'x',
  TIKTOK_CLIENT_KEY: 'x',
  TIKTOK_CLIENT_SECRET: 'x',
  TIKTOK_RESEARCH_ELIGIBLE: '1',
  META_ACCESS_TOKEN: 'x',
  INSTAGRAM_BUSINESS_ACCOUNT_ID: 'x',
  SCRAPECREATORS_API_KEY: 'x',
};

/**
 * Why no live source serves an operation, as read in the sources' published references on
 * 2026-11-27 (docs/providers.md prints it in the coverage table; a test fails when an
 * unserved operation has no reason).
 */
export const UNSERVED_REASONS: Record<string, string> = {
  'instagram.followers':
    "the Instagram Graph API gives another account's follower count (business_discovery), never the list; the vendor's reference has no followers endpoint",
  'instagram.following':
    "the Instagram Graph API gives another account's follows count (business_discovery), never the list; the vendor's reference has no following endpoint",
  'instagram.stories':
    "the Instagram Graph API returns the stories of the operator's own account only (IG User /stories); the vendor's reference has no stories endpoint",
  'facebook.profile_analytics':
    "Page Insights (Graph API /{page-id}/insights) needs a token of a Page the operator manages, so not of any page; the vendor's reference has no analytics endpoint",
};

export interface CoverageRow {
  platform: Platform;
  operation: string;
  /** The adapter that serves it with the default order (official, then vendor), or null. */
  served: string | null;
  official: string | null;
  vendor: string | null;
}

export function coverage(env: NodeJS.ProcessEnv = FULL_ENV): CoverageRow[] {
  const live = liveProviders(env);
  const registry = createProviderRegistry(routeProviders(live, routeOrders(env)));
  const find = (platform: Platform, operation: string, source: 'official' | 'vendor'): UpstreamProvider | undefined =>
    live[platform].find((p) => p.source === source && p.supports(platform, operation));
  return PLATFORMS.flatMap((platform) =>
    CATALOG[platform].map((spec) => {
      const provider: Provider | undefined = registry.resolve(platform, spec.operation);
      return {
        platform,
        operation: spec.operation,
        served: provider?.name ?? null,
        official: find(platform, spec.operation, 'official')?.name ?? null,
        vendor: find(platform, spec.operation, 'vendor')?.name ?? null,
      };
    }),
  );
}

const label = (name: string | null): string => (name ? (ADAPTERS[name]?.label ?? name) : '');

/** The coverage section of docs/providers.md. */
export function renderCoverage(rows: CoverageRow[] = coverage()): string {
  const lines = [
    '| Platform | Operation | Live source (default order) | Also offered by | Credentials | Licence | Limits |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    const meta = r.served ? ADAPTERS[r.served] : undefined;
    const other = r.served === r.official ? label(r.vendor) : label(r.official);
    lines.push(
      `| ${r.platform} | ${r.operation} | ${r.served ? label(r.served) : `none (sandbox only): ${UNSERVED_REASONS[`${r.platform}.${r.operation}`] ?? 'no source offers it'}`} | ${other} | ${meta?.credentials ?? ''} | ${meta?.licence ?? ''} | ${meta?.limits ?? ''} |`,
    );
  }
  const live = rows.filter((r) => r.served).length;
  const official = rows.filter((r) => r.official).length;
  const vendorOnly = rows.filter((r) => r.vendor && !r.official).length;
  const none = rows.filter((r) => !r.served).map((r) => `${r.platform} ${r.operation}`);
  lines.push(
    '',
    `Live coverage: ${live} of ${rows.length} operations (${official} through an official API, ${vendorOnly} through the vendor only). ` +
      `No live source: ${none.join(', ')}.`,
  );
  return lines.join('\n');
}

/** The error classification tables of docs/providers.md, one per adapter, from the adapters' own tables. */
export function renderErrorTables(env: NodeJS.ProcessEnv = FULL_ENV): string {
  const live = liveProviders(env);
  // Adapters sharing one table (the three Graph API adapters) are listed together.
  const tables = new Map<string, { names: string[]; provider: UpstreamProvider }>();
  for (const platform of PLATFORMS) {
    for (const p of live[platform]) {
      const key = JSON.stringify(p.errors);
      const entry = tables.get(key) ?? { names: [], provider: p };
      if (!entry.names.includes(p.name)) entry.names.push(p.name);
      tables.set(key, entry);
    }
  }
  const out: string[] = [];
  for (const { names, provider } of tables.values()) {
    out.push(
      `#### ${names.map((n) => `${label(n)} (\`${n}\`)`).join(', ')}`,
      '',
      '| Status | Upstream code or reason | Our code | Retryable | Wait |',
      '|---|---|---|---|---|',
    );
    for (const row of provider.errors)
      out.push(`| ${row.status} | ${row.upstream} | \`${row.code}\` | ${row.retryable ? 'yes' : 'no'} | ${row.wait} |`);
    out.push('');
  }
  return out.join('\n').trimEnd();
}

export const COVERAGE_MARKERS = ['<!-- coverage:start (generated) -->', '<!-- coverage:end -->'] as const;
export const ERRORS_MARKERS = ['<!-- errors:start (generated) -->', '<!-- errors:end -->'] as const;

/** The document with both generated sections replaced. */
export function withGeneratedSections(doc: string): string {
  const replace = (text: string, [start, end]: readonly [string, string], body: string): string => {
    const i = text.indexOf(start);
    const j = text.indexOf(end);
    if (i < 0 || j < i) throw new Error(`docs/providers.md lacks the markers ${start} … ${end}`);
    return `${text.slice(0, i + start.length)}\n${body}\n${text.slice(j)}`;
  };
  return replace(replace(doc, COVERAGE_MARKERS, renderCoverage()), ERRORS_MARKERS, renderErrorTables());
}
