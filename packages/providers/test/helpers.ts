import { findOperation, type Platform } from '@sdx/catalog';
import { ProviderError, type ExtractionRequest, type Item, type Page, type Provider } from '@sdx/providers';

/** A first-attempt request for a catalog operation, its limit capped at the operation's max_results. */
export function request(
  platform: Platform,
  operation: string,
  target: string,
  limit: number,
  extra: Partial<ExtractionRequest> = {},
): ExtractionRequest {
  const spec = findOperation(platform, operation);
  if (!spec) throw new Error(`no ${platform} ${operation}`);
  return {
    platform,
    operation,
    spec,
    target,
    limit: Math.min(limit, spec.max_results),
    includePosts: 0,
    attempt: 1,
    resumeCursor: null,
    signal: new AbortController().signal,
    ...extra,
  };
}

/** Every page of an extraction, and their items in order. */
export async function collect(provider: Provider, req: ExtractionRequest): Promise<{ pages: Page[]; items: Item[] }> {
  const pages: Page[] = [];
  for await (const page of provider.extract(req)) pages.push(page);
  return { pages, items: pages.flatMap((p) => p.items) };
}

/** The ProviderError an extraction ends with; any other outcome fails the test. */
export async function failure(provider: Provider, req: ExtractionRequest): Promise<ProviderError> {
  try {
    await collect(provider, req);
  } catch (error) {
    if (error instanceof ProviderError) return error;
    throw error;
  }
  throw new Error('extraction did not fail');
}
