/**
 * Provider selection from the environment (docs/providers.md lists every variable).
 *
 * PROVIDER_MODE:
 *   unset    → `sandbox` when no upstream credentials are set, else `live`.
 *   sandbox  → the sandbox serves every catalog operation.
 *   live     → only operations served by configured upstream adapters.
 *   per platform, e.g. `youtube=live,twitter=live,instagram=sandbox`: each listed platform is
 *            `live`, `sandbox` or `off`; unlisted platforms stay on the sandbox.
 *
 * Live sources are official APIs and the vendor. PROVIDER_ORDER (default `official,vendor`) says
 * which serves an operation both offer; PROVIDER_ROUTES overrides it per platform or operation,
 * e.g. `instagram.comments=vendor;youtube=vendor,official;twitter.transcript=off`.
 * PROVIDER_FALLBACK (default on; `0` turns it off): an attempt refused by one source for its
 * credentials or permission goes on with the next source of the order.
 */
import { CATALOG, PLATFORMS, findOperation, isPlatform, type Platform } from '@sdx/catalog';
import type { Provider } from './types';
import { createMetaAdLibraryProvider, createFacebookPagesProvider, createInstagramProvider } from './upstream/meta';
import { createTikTokProvider } from './upstream/tiktok';
import { createXProvider } from './upstream/x';
import { createScrapeCreatorsProvider } from './upstream/scrapecreators';
import type { UpstreamProvider } from './upstream/provider';
import { createYouTubeProvider } from './upstream/youtube';
import type { HttpSettings } from './upstream/http';
import { chainProvider, type ChainOptions, type SourceGate } from './fallback';

export type ProviderMode = 'sandbox' | 'live' | 'mixed';
type PlatformChoice = 'live' | 'sandbox' | 'off';

export interface ProviderSelection {
  mode: ProviderMode;
  providers: Provider[];
  /** What serves each platform. */
  platforms: Record<Platform, PlatformChoice>;
  /** Configuration problems worth logging (never carrying credential values). */
  warnings: string[];
}

const nonEmpty = (v: string | undefined): string | undefined => (v && v.trim() !== '' ? v.trim() : undefined);

function positiveInt(name: string, v: string | undefined): number | undefined {
  const raw = nonEmpty(v);
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer`);
  return n;
}

const flag = (v: string | undefined): boolean => ['1', 'true', 'yes'].includes(nonEmpty(v)?.toLowerCase() ?? '');

/** The live adapters the credentials in `env` enable, per platform (official ones first, then the vendor). */
export function liveProviders(env: NodeJS.ProcessEnv, warnings: string[] = []): Record<Platform, UpstreamProvider[]> {
  const timeoutMs = positiveInt('UPSTREAM_TIMEOUT_MS', env.UPSTREAM_TIMEOUT_MS) ?? 15_000;
  const http = (baseUrl: string | undefined): Partial<HttpSettings> => ({ timeoutMs, ...(baseUrl ? { baseUrl } : {}) });
  const out: Record<Platform, UpstreamProvider[]> = { instagram: [], tiktok: [], youtube: [], twitter: [], facebook: [] };

  const youtubeKey = nonEmpty(env.YOUTUBE_API_KEY);
  if (youtubeKey) {
    out.youtube.push(
      createYouTubeProvider({
        ...http(nonEmpty(env.YOUTUBE_BASE_URL)),
        apiKey: youtubeKey,
        shortsPlaylist: flag(env.YOUTUBE_SHORTS_PLAYLIST),
      }),
    );
  }

  const xToken = nonEmpty(env.X_BEARER_TOKEN);
  if (xToken) out.twitter.push(createXProvider({ ...http(nonEmpty(env.X_BASE_URL)), bearerToken: xToken }));

  const tiktokKey = nonEmpty(env.TIKTOK_CLIENT_KEY);
  const tiktokSecret = nonEmpty(env.TIKTOK_CLIENT_SECRET);
  if (tiktokKey && tiktokSecret && !flag(env.TIKTOK_RESEARCH_ELIGIBLE)) {
    warnings.push(
      'TikTok credentials are set but TIKTOK_RESEARCH_ELIGIBLE is not: TikTok licenses the Research and Commercial Content APIs for eligible research only, so they stay off',
    );
  }
  if (tiktokKey && tiktokSecret && flag(env.TIKTOK_RESEARCH_ELIGIBLE)) {
    const lookback = positiveInt('TIKTOK_LOOKBACK_DAYS', env.TIKTOK_LOOKBACK_DAYS);
    out.tiktok.push(
      createTikTokProvider({
        ...http(nonEmpty(env.TIKTOK_BASE_URL)),
        clientKey: tiktokKey,
        clientSecret: tiktokSecret,
        ...(lookback ? { lookbackDays: lookback } : {}),
      }),
    );
  }

  const graphBase = nonEmpty(env.META_GRAPH_BASE_URL);
  const metaToken = nonEmpty(env.META_ACCESS_TOKEN);
  if (metaToken) {
    const countries = nonEmpty(env.META_AD_REACHED_COUNTRIES)
      ?.split(',')
      .map((c) => c.trim().toUpperCase())
      .filter(Boolean);
    out.facebook.push(
      createMetaAdLibraryProvider({ ...http(graphBase), accessToken: metaToken, ...(countries ? { reachedCountries: countries } : {}) }),
    );
  }
  const facebookToken = nonEmpty(env.FACEBOOK_ACCESS_TOKEN) ?? metaToken;
  if (facebookToken) out.facebook.push(createFacebookPagesProvider({ ...http(graphBase), accessToken: facebookToken }));

  const igAccount = nonEmpty(env.INSTAGRAM_BUSINESS_ACCOUNT_ID);
  const igToken = nonEmpty(env.INSTAGRAM_ACCESS_TOKEN) ?? metaToken;
  if (igAccount && igToken) {
    out.instagram.push(createInstagramProvider({ ...http(graphBase), accessToken: igToken, businessAccountId: igAccount }));
  }

  const vendorKey = nonEmpty(env.SCRAPECREATORS_API_KEY);
  if (vendorKey) {
    const vendor = createScrapeCreatorsProvider({ ...http(nonEmpty(env.SCRAPECREATORS_BASE_URL)), apiKey: vendorKey });
    for (const platform of PLATFORMS) if (vendor.operations().some((o) => o.platform === platform)) out[platform].push(vendor);
  }
  return out;
}

export type LiveSource = 'official' | 'vendor';
type RouteOrder = Array<LiveSource>;

function parseOrder(name: string, raw: string): RouteOrder {
  const parts = raw
    .split(',')
    .map((p) => p.trim().toLowerCase())
    .filter(Boolean);
  if (parts.length === 1 && parts[0] === 'off') return [];
  for (const p of parts) if (p !== 'official' && p !== 'vendor') throw new Error(`${name}: "${p}" is not official, vendor or off`);
  return Array.from(new Set(parts)) as RouteOrder;
}

/**
 * The order of live sources per (platform, operation): PROVIDER_ORDER for all, then
 * PROVIDER_ROUTES entries `<platform>=<order>` and `<platform>.<operation>=<order>` (the most
 * specific wins), separated by `;`.
 */
export function routeOrders(env: NodeJS.ProcessEnv): (platform: Platform, operation: string) => RouteOrder {
  const base = parseOrder('PROVIDER_ORDER', nonEmpty(env.PROVIDER_ORDER) ?? 'official,vendor');
  const byPlatform = new Map<string, RouteOrder>();
  const byOperation = new Map<string, RouteOrder>();
  for (const entry of (nonEmpty(env.PROVIDER_ROUTES) ?? '')
    .split(';')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const [key, value] = entry.split('=').map((s) => s.trim());
    const [platform, operation] = (key ?? '').split('.');
    if (!platform || !isPlatform(platform) || value === undefined) {
      throw new Error(`PROVIDER_ROUTES: "${entry}" is not <platform>[.<operation>]=<official|vendor|off>[,...]`);
    }
    const order = parseOrder('PROVIDER_ROUTES', value);
    if (operation) {
      if (!findOperation(platform, operation)) throw new Error(`PROVIDER_ROUTES: ${platform} has no operation ${operation}`);
      byOperation.set(`${platform}.${operation}`, order);
    } else byPlatform.set(platform, order);
  }
  return (platform, operation) => byOperation.get(`${platform}.${operation}`) ?? byPlatform.get(platform) ?? base;
}

/**
 * The live providers, each answering only for the operations routing gives it: for each catalog
 * operation, the sources of its order whose adapters serve it, in that order. The first serves;
 * with `fallback` (PROVIDER_FALLBACK, default on) the next take over when it refuses the
 * credentials or the permission (see fallback.ts). Operations with the same chain share one provider.
 */
export function routeProviders(
  live: Record<Platform, UpstreamProvider[]>,
  order: (platform: Platform, operation: string) => RouteOrder,
  options: Partial<ChainOptions> = {},
): Provider[] {
  const chains = new Map<string, { chain: UpstreamProvider[]; keys: Set<string> }>();
  for (const platform of PLATFORMS) {
    for (const spec of CATALOG[platform]) {
      const chain: UpstreamProvider[] = [];
      for (const source of order(platform, spec.operation)) {
        const provider = live[platform].find((p) => p.source === source && p.supports(platform, spec.operation));
        if (provider && !chain.includes(provider)) chain.push(provider);
      }
      if (chain.length === 0) continue;
      const id = chain.map((p) => p.name).join('>');
      const entry = chains.get(id) ?? { chain, keys: new Set<string>() };
      entry.keys.add(`${platform}.${spec.operation}`);
      chains.set(id, entry);
    }
  }
  return [...chains.values()].map(({ chain, keys }) =>
    chainProvider(chain, keys, { fallback: options.fallback ?? true, ...(options.gate ? { gate: options.gate } : {}) }),
  );
}

/** PROVIDER_FALLBACK: `0` (or false, no, off) turns the run-time fallback off; unset or `1` leaves it on. */
export function fallbackEnabled(env: NodeJS.ProcessEnv): boolean {
  const raw = nonEmpty(env.PROVIDER_FALLBACK)?.toLowerCase();
  if (raw === undefined) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  throw new Error('PROVIDER_FALLBACK must be 1 or 0');
}

/** The sandbox, answering only for `platforms`. */
export function restrictProvider(provider: Provider, platforms: ReadonlySet<Platform>): Provider {
  return {
    name: provider.name,
    ...(provider.source ? { source: provider.source } : {}),
    supports: (platform, operation) => platforms.has(platform) && provider.supports(platform, operation),
    extract: (request) => provider.extract(request),
  };
}

function parseMode(raw: string | undefined, anyCredentials: boolean): Record<Platform, PlatformChoice> {
  const all = (choice: PlatformChoice): Record<Platform, PlatformChoice> =>
    Object.fromEntries(PLATFORMS.map((p) => [p, choice])) as Record<Platform, PlatformChoice>;
  const value = nonEmpty(raw)?.toLowerCase();
  if (value === undefined) return all(anyCredentials ? 'live' : 'sandbox');
  if (value === 'sandbox' || value === 'live') return all(value);
  const choices = all('sandbox');
  for (const part of value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [platform, choice] = part.split('=').map((s) => s.trim());
    if (!platform || !isPlatform(platform) || (choice !== 'live' && choice !== 'sandbox' && choice !== 'off')) {
      throw new Error(`PROVIDER_MODE: "${part}" is not <platform>=live|sandbox|off (platforms: ${PLATFORMS.join(', ')})`);
    }
    choices[platform] = choice;
  }
  return choices;
}

export function selectProviders(env: NodeJS.ProcessEnv, options: { sandbox: Provider; gate?: SourceGate }): ProviderSelection {
  const warnings: string[] = [];
  const live = liveProviders(env, warnings);
  const anyCredentials = PLATFORMS.some((p) => live[p].length > 0);
  const platforms = parseMode(env.PROVIDER_MODE, anyCredentials);
  const order = routeOrders(env);
  const providers: Provider[] = [];
  const sandboxed = new Set<Platform>();
  const livePlatforms: Record<Platform, UpstreamProvider[]> = { instagram: [], tiktok: [], youtube: [], twitter: [], facebook: [] };
  for (const platform of PLATFORMS) {
    if (platforms[platform] === 'live') {
      if (live[platform].length === 0)
        warnings.push(`${platform} is live but no ${platform} credentials are set: its operations are unavailable`);
      livePlatforms[platform] = live[platform];
    } else if (platforms[platform] === 'sandbox') sandboxed.add(platform);
  }
  providers.push(
    ...routeProviders(livePlatforms, order, { fallback: fallbackEnabled(env), ...(options.gate ? { gate: options.gate } : {}) }),
  );
  const choices = new Set(Object.values(platforms));
  const mode: ProviderMode =
    choices.size === 1 && choices.has('sandbox') ? 'sandbox' : choices.size === 1 && choices.has('live') ? 'live' : 'mixed';
  if (sandboxed.size === PLATFORMS.length) providers.push(options.sandbox);
  else if (sandboxed.size > 0) providers.push(restrictProvider(options.sandbox, sandboxed));
  return { mode, providers, platforms, warnings };
}
