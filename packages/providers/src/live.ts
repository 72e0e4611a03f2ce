/**
 * Provider selection from the environment (docs/providers.md lists every variable).
 *
 * PROVIDER_MODE:
 *   unset    → `sandbox` when no upstream credentials are set, else `live`.
 *   sandbox  → the sandbox serves every catalog operation.
 *   live     → only operations served by configured upstream adapters.
 *   per platform, e.g. `youtube=live,twitter=live,instagram=sandbox`: each listed platform is
 *            `live`, `sandbox` or `off`; unlisted platforms stay on the sandbox.
 */
import { PLATFORMS, isPlatform, type Platform } from '@sdx/catalog';
import type { Provider } from './types';
import { createMetaAdLibraryProvider, createFacebookPagesProvider, createInstagramProvider } from './upstream/meta';
import { createTikTokProvider } from './upstream/tiktok';
import { createXProvider } from './upstream/x';
import { createYouTubeProvider } from './upstream/youtube';
import type { HttpSettings } from './upstream/http';

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

/** The live adapters the credentials in `env` enable, per platform. */
export function liveProviders(env: NodeJS.ProcessEnv): Record<Platform, Provider[]> {
  const timeoutMs = positiveInt('UPSTREAM_TIMEOUT_MS', env.UPSTREAM_TIMEOUT_MS) ?? 15_000;
  const http = (baseUrl: string | undefined): Partial<HttpSettings> => ({ timeoutMs, ...(baseUrl ? { baseUrl } : {}) });
  const out: Record<Platform, Provider[]> = { instagram: [], tiktok: [], youtube: [], twitter: [], facebook: [] };

  const youtubeKey = nonEmpty(env.YOUTUBE_API_KEY);
  if (youtubeKey) out.youtube.push(createYouTubeProvider({ ...http(nonEmpty(env.YOUTUBE_BASE_URL)), apiKey: youtubeKey }));

  const xToken = nonEmpty(env.X_BEARER_TOKEN);
  if (xToken) out.twitter.push(createXProvider({ ...http(nonEmpty(env.X_BASE_URL)), bearerToken: xToken }));

  const tiktokKey = nonEmpty(env.TIKTOK_CLIENT_KEY);
  const tiktokSecret = nonEmpty(env.TIKTOK_CLIENT_SECRET);
  if (tiktokKey && tiktokSecret) {
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
    const countries = nonEmpty(env.META_AD_REACHED_COUNTRIES)?.split(',').map((c) => c.trim().toUpperCase()).filter(Boolean);
    out.facebook.push(createMetaAdLibraryProvider({ ...http(graphBase), accessToken: metaToken, ...(countries ? { reachedCountries: countries } : {}) }));
  }
  const facebookToken = nonEmpty(env.FACEBOOK_ACCESS_TOKEN) ?? metaToken;
  if (facebookToken) out.facebook.push(createFacebookPagesProvider({ ...http(graphBase), accessToken: facebookToken }));

  const igAccount = nonEmpty(env.INSTAGRAM_BUSINESS_ACCOUNT_ID);
  const igToken = nonEmpty(env.INSTAGRAM_ACCESS_TOKEN) ?? metaToken;
  if (igAccount && igToken) {
    out.instagram.push(createInstagramProvider({ ...http(graphBase), accessToken: igToken, businessAccountId: igAccount }));
  }
  return out;
}

/** The sandbox, answering only for `platforms`. */
export function restrictProvider(provider: Provider, platforms: ReadonlySet<Platform>): Provider {
  return {
    name: provider.name,
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
  for (const part of value.split(',').map((s) => s.trim()).filter(Boolean)) {
    const [platform, choice] = part.split('=').map((s) => s.trim());
    if (!platform || !isPlatform(platform) || (choice !== 'live' && choice !== 'sandbox' && choice !== 'off')) {
      throw new Error(`PROVIDER_MODE: "${part}" is not <platform>=live|sandbox|off (platforms: ${PLATFORMS.join(', ')})`);
    }
    choices[platform] = choice;
  }
  return choices;
}

export function selectProviders(env: NodeJS.ProcessEnv, options: { sandbox: Provider }): ProviderSelection {
  const live = liveProviders(env);
  const anyCredentials = PLATFORMS.some((p) => live[p].length > 0);
  const platforms = parseMode(env.PROVIDER_MODE, anyCredentials);
  const warnings: string[] = [];
  const providers: Provider[] = [];
  const sandboxed = new Set<Platform>();
  for (const platform of PLATFORMS) {
    if (platforms[platform] === 'live') {
      if (live[platform].length === 0) warnings.push(`${platform} is live but no ${platform} credentials are set: its operations are unavailable`);
      providers.push(...live[platform]);
    } else if (platforms[platform] === 'sandbox') sandboxed.add(platform);
  }
  const choices = new Set(Object.values(platforms));
  const mode: ProviderMode = choices.size === 1 && choices.has('sandbox') ? 'sandbox' : choices.size === 1 && choices.has('live') ? 'live' : 'mixed';
  if (sandboxed.size === PLATFORMS.length) providers.push(options.sandbox);
  else if (sandboxed.size > 0) providers.push(restrictProvider(options.sandbox, sandboxed));
  return { mode, providers, platforms, warnings };
}
