import type { Platform } from '@sdx/catalog';
import { ProviderError, type ExtractionRequest, type Item, type ItemSource, type Page, type Provider, type QuotaReading } from '../types';
import type { ErrorRow } from './classify';

export type OperationHandler = (request: ExtractionRequest) => AsyncIterable<Page>;
export type OperationHandlers = Partial<Record<Platform, Record<string, OperationHandler>>>;

/** A provider backed by an upstream API: the operations it serves and one handler each. */
export interface UpstreamProvider extends Provider {
  readonly source: Exclude<ItemSource, 'sandbox'>;
  /** The adapter's error classification table, in the order it is read. */
  readonly errors: ErrorRow[];
  /** Every (platform, operation) pair this provider serves. */
  operations(): Array<{ platform: Platform; operation: string }>;
  /** The quota the attempt of `signal` used and was told is left, where the upstream reports it. */
  quota?(signal: AbortSignal): QuotaReading | null;
}

/** Every item of `pages`, stamped with where it came from. */
export async function* stamped(pages: AsyncIterable<Page>, source: ItemSource): AsyncGenerator<Page> {
  for await (const page of pages) yield { ...page, items: page.items.map((item): Item => ({ ...item, source })) };
}

export function upstreamProvider(
  name: string,
  source: Exclude<ItemSource, 'sandbox'>,
  errors: ErrorRow[],
  handlers: OperationHandlers,
  quota?: (signal: AbortSignal) => QuotaReading | null,
): UpstreamProvider {
  return {
    name,
    source,
    errors,
    ...(quota ? { quota } : {}),
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
        throw new ProviderError('internal_error', `${name} does not serve ${request.platform} ${request.operation}`, false);
      }
      return stamped(handler(request), source);
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
