import {
  CATALOG,
  PLATFORMS,
  PLATFORM_LABELS,
  defaultLimitOf,
  findOperation,
  isMonitorable,
  type OperationSpec,
  type Platform,
} from '@sdx/catalog';
import type { Provider } from './types';

/** A platform with the operations some provider serves, in catalog order. */
export interface EnabledPlatform {
  platform: Platform;
  label: string;
  operations: OperationSpec[];
}

/** OperationCapability of GET /v1/platforms (api-v1.md 2.3, decisions.md "Identifiers and catalog"). */
export interface OperationCapability {
  operation: string;
  max_results: number;
  /** The effective limit of a request without one (catalog `defaultLimitOf`). */
  default_limit: number;
  credits_per_result: number;
  results_per_credit: number;
  base_credits: number;
  requires_session: boolean;
  /** Whether a monitor may run it (catalog `isMonitorable`). */
  monitorable: boolean;
}

/** PlatformResponse of GET /v1/platforms. */
export interface PlatformResponse {
  platform: string;
  label: string;
  operations: OperationCapability[];
}

/**
 * Which provider serves each catalog operation. An operation is enabled when it is in the
 * catalog and at least one provider supports it; the first such provider (in the order given)
 * serves it.
 */
export class ProviderRegistry {
  private readonly providers: readonly Provider[];

  constructor(providers: readonly Provider[]) {
    this.providers = [...providers];
  }

  /** The provider that serves (platform, operation), or undefined when none does. */
  resolve(platform: string, operation: string): Provider | undefined {
    const spec = findOperation(platform, operation);
    if (!spec) return undefined;
    const known = platform as Platform;
    return this.providers.find((p) => p.supports(known, spec.operation));
  }

  isEnabled(platform: string, operation: string): boolean {
    return this.resolve(platform, operation) !== undefined;
  }

  /** The live sources serving some operation of `platform` (adapter and kind), each once, in order; none for the sandbox. */
  liveSources(platform: string): Array<{ provider: string; source: 'official' | 'vendor' }> {
    const out = new Map<string, { provider: string; source: 'official' | 'vendor' }>();
    for (const spec of CATALOG[platform as Platform] ?? []) {
      for (const s of this.resolve(platform, spec.operation)?.sources ?? []) if (!out.has(s.provider)) out.set(s.provider, { ...s });
    }
    return [...out.values()];
  }

  /** Whether some live source (not the sandbox) serves an operation. */
  hasLiveSources(): boolean {
    return this.providers.some((p) => (p.sources?.length ?? 0) > 0);
  }

  /** Enabled operations per platform, in catalog order; platforms with none are left out. */
  platforms(): EnabledPlatform[] {
    const out: EnabledPlatform[] = [];
    for (const platform of PLATFORMS) {
      const operations = CATALOG[platform].filter((spec) => this.isEnabled(platform, spec.operation));
      if (operations.length > 0) out.push({ platform, label: PLATFORM_LABELS[platform], operations });
    }
    return out;
  }
}

export function createProviderRegistry(providers: readonly Provider[]): ProviderRegistry {
  return new ProviderRegistry(providers);
}

/** The GET /v1/platforms body for the operations the registry enables. */
export function toPlatformResponse(registry: ProviderRegistry): PlatformResponse[] {
  return registry.platforms().map(({ platform, label, operations }) => ({
    platform,
    label,
    operations: operations.map((spec) => ({
      operation: spec.operation,
      max_results: spec.max_results,
      default_limit: defaultLimitOf(spec),
      credits_per_result: spec.credits_per_result,
      results_per_credit: spec.results_per_credit,
      base_credits: spec.base_credits,
      requires_session: false,
      monitorable: isMonitorable(platform, spec.operation),
    })),
  }));
}
