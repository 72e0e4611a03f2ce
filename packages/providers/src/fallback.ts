/**
 * Run-time fallback between the live sources of one operation (PROVIDER_FALLBACK, default on):
 * an attempt starts on the first source of the operation's order (PROVIDER_ORDER,
 * PROVIDER_ROUTES) and, when that source refuses the credentials or the permission
 * (`upstream_auth`) before it has delivered a page, goes on with the next source. Any other
 * error ends the attempt as it did (the job retries or fails by its own rules).
 *
 * Pages are tagged with the source that made their cursor, so an attempt that resumes a saved
 * cursor continues on that same source (a cursor of one source means nothing to another) and
 * does not fall over in the middle of a list.
 */
import type { Platform } from '@sdx/catalog';
import { ProviderError, type ExtractionRequest, type Page, type Provider, type SourceReport } from './types';
import type { UpstreamProvider } from './upstream/provider';

/** The prefix of a cursor saved by a source of a fallback chain: `@official:` or `@vendor:`. */
const TAG = /^@(official|vendor):/;

export function tagCursor(source: UpstreamProvider['source'], cursor: string | null): string | null {
  return cursor === null ? null : `@${source}:${cursor}`;
}

/** The source and the source's own cursor of a tagged cursor; null source for an untagged one. */
export function untagCursor(cursor: string): { source: UpstreamProvider['source'] | null; cursor: string } {
  const m = TAG.exec(cursor);
  return m ? { source: m[1] as UpstreamProvider['source'], cursor: cursor.slice(m[0].length) } : { source: null, cursor };
}

/** Whether an error lets the attempt go on with the next source: a refused key, token or permission. */
export function fallsOver(error: unknown): error is ProviderError {
  return error instanceof ProviderError && error.code === 'upstream_auth';
}

/** Whether a source may be tried now (source health: a source marked down is skipped until a probe succeeds). */
export interface SourceGate {
  /** False while the adapter `provider` is marked down and this attempt is not its probe. */
  usable(provider: string): boolean;
}

export interface ChainOptions {
  /** Go on with the next source on `upstream_auth` (PROVIDER_FALLBACK). */
  fallback: boolean;
  gate?: SourceGate;
}

/** The error `error` with the sources of this attempt added to its context (they reach the job's error). */
function withSources(error: unknown, source: string, tried: readonly string[]): unknown {
  if (!(error instanceof ProviderError)) return error;
  const context = { ...error.context, source, ...(tried.length > 1 ? { sources_tried: [...tried] } : {}) };
  return new ProviderError(error.code, error.message, error.retryable, error.retryAfterMs, context);
}

/**
 * The provider serving `keys` (platform.operation) from `chain`, in order. With one source it
 * extracts as that source does; with more, cursors are tagged and `upstream_auth` falls over.
 * Each source tried is reported to `request.onSource`.
 */
export function chainProvider(chain: readonly UpstreamProvider[], keys: ReadonlySet<string>, options: ChainOptions): Provider {
  const first = chain[0];
  if (!first) throw new Error('a source chain needs at least one source');
  const several = chain.length > 1;

  async function* extract(request: ExtractionRequest): AsyncGenerator<Page> {
    let candidates = [...chain];
    let resumeCursor = request.resumeCursor;
    if (several && resumeCursor !== null) {
      // Resumed: the source that made the cursor goes on alone (an untagged cursor is the first source's).
      const saved = untagCursor(resumeCursor);
      resumeCursor = saved.cursor;
      const owner = candidates.find((p) => p.source === (saved.source ?? first.source)) ?? first;
      candidates = [owner];
    } else if (several && options.gate) {
      // Sources marked down are skipped while another is up; when all are down, all are tried.
      const gate = options.gate;
      const usable = candidates.filter((p) => gate.usable(p.name));
      if (usable.length > 0) candidates = usable;
    }
    if (!options.fallback) candidates = candidates.slice(0, 1);
    const tried: string[] = [];
    for (const [index, provider] of candidates.entries()) {
      tried.push(provider.source);
      const report = (outcome: SourceReport['outcome'], error?: ProviderError): void =>
        request.onSource?.({
          source: provider.source,
          provider: provider.name,
          outcome,
          error_code: error?.code ?? null,
          quota: provider.quota?.(request.signal) ?? null,
        });
      let delivered = false;
      let failed = false;
      try {
        for await (const page of provider.extract({ ...request, resumeCursor })) {
          delivered = true;
          yield several ? { ...page, cursor: tagCursor(provider.source, page.cursor) } : page;
        }
      } catch (error) {
        failed = true;
        report('failed', error instanceof ProviderError ? error : undefined);
        const last = index === candidates.length - 1;
        if (delivered || last || request.signal.aborted || !fallsOver(error)) throw withSources(error, provider.source, tried);
      } finally {
        // Also reached when the worker stops reading (it has the limit): the source served.
        if (!failed) report('served');
      }
      if (!failed) return;
    }
  }

  return {
    name: first.name,
    source: first.source,
    sources: chain.map((p) => ({ provider: p.name, source: p.source })),
    supports: (platform: Platform, operation: string) =>
      keys.has(`${platform}.${operation}`) && chain.some((p) => p.supports(platform, operation)),
    extract,
  };
}
