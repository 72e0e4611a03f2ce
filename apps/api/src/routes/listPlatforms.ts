import { readSourceHealth, type SourceHealth } from '@sdx/domain/api';
import { toPlatformResponse } from '@sdx/providers';
import type { AppDeps } from '../deps';
import { route } from './route';

/** How long one read of the sources' health answers GET /v1/platforms in this process. */
const HEALTH_TTL_MS = 5_000;

/**
 * GET /v1/platforms — no credentials; the enabled catalog. Where live sources serve, each
 * platform also lists them with their health (read from Postgres at most every 5 s per
 * process); with the sandbox alone (`sources` empty) the body is built once and nothing is read.
 */
export const listPlatforms = route('listPlatforms', {
  access: 'public',
  setup: ({ registry, services }: AppDeps) => {
    // `sources` lists the live sources; the sandbox has none.
    const body = toPlatformResponse(registry).map((platform) => ({ ...platform, sources: [] as SourceHealth[] }));
    if (!registry.hasLiveSources()) {
      return ({ res }) => {
        res.json(body);
      };
    }
    let cached: { at: number; health: Promise<SourceHealth[]> } | null = null;
    const health = (): Promise<SourceHealth[]> => {
      const now = Date.now();
      if (!cached || now - cached.at >= HEALTH_TTL_MS) {
        const read = readSourceHealth(services.db, services.clock.now());
        read.catch(() => {
          cached = null;
        });
        cached = { at: now, health: read };
      }
      return cached.health;
    };
    return async ({ res }) => {
      const byProvider = new Map((await health()).map((h) => [h.provider, h]));
      res.json(
        body.map((platform) => {
          const sources = registry.liveSources(platform.platform);
          if (sources.length === 0) return platform;
          return { ...platform, sources: sources.map((s) => byProvider.get(s.provider) ?? unknownHealth(s.provider, s.source)) };
        }),
      );
    };
  },
});

/** A source no attempt has tried yet. */
function unknownHealth(provider: string, source: SourceHealth['source']): SourceHealth {
  return {
    provider,
    source,
    status: 'up',
    down_since: null,
    last_success_at: null,
    last_failure_at: null,
    auth_failures: 0,
    attempts_15m: 0,
    error_rate_15m: null,
    quota: null,
  };
}
