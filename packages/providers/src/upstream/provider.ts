import type { Platform } from '@sdx/catalog';
import { ProviderError, type ExtractionRequest, type Page, type Provider } from '../types';

export type OperationHandler = (request: ExtractionRequest) => AsyncIterable<Page>;
export type OperationHandlers = Partial<Record<Platform, Record<string, OperationHandler>>>;

/** A provider backed by an upstream API: the operations it serves and one handler each. */
export interface UpstreamProvider extends Provider {
  /** Every (platform, operation) pair this provider serves. */
  operations(): Array<{ platform: Platform; operation: string }>;
}

export function upstreamProvider(name: string, handlers: OperationHandlers): UpstreamProvider {
  return {
    name,
    supports(platform, operation) {
      return Boolean(handlers[platform]?.[operation]);
    },
    operations() {
      return (Object.keys(handlers) as Platform[]).flatMap((platform) =>
        Object.keys(handlers[platform] ?? {}).map((operation) => ({ platform, operation })),
      );
    },
    extract(request) {
      const handler = handlers[request.platform]?.[request.operation];
      if (!handler) {
        throw new ProviderError(
          'internal_error',
          `${name} does not serve ${request.platform} ${request.operation}`,
          false,
        );
      }
      return handler(request);
    },
  };
}

/** Parse a URL target (normalized targets are canonical https URLs), or null for a bare value. */
export function asUrl(target: string): URL | null {
  if (!/^https?:\/\//i.test(target)) return null;
  try {
    return new URL(target);
  } catch {
    return null;
  }
}
