import { bundlePostsSpec, findOperation, supportsBundle, type Platform } from '@sdx/catalog';
import { ProviderError, type ExtractionRequest, type Item, type Page, type Provider } from '../types';
import { hasGenerator, openStream, type Stream } from './operations';
import { parseSandboxTokens, SANDBOX_DRIFT_EPOCH_MS } from './tokens';

export type SleepFn = (ms: number, signal: AbortSignal) => Promise<void>;

export interface SandboxProviderOptions {
  /** Waited before every page (SANDBOX_LATENCY_MS). Default 0. */
  latencyMs?: number;
  /** Items per page. Default 100. */
  pageSize?: number;
  /** Items per page of followers and following. Default 1000. */
  followPageSize?: number;
  /** How to wait; must reject promptly when the signal aborts. Default: abortableSleep. */
  sleep?: SleepFn;
}

export const SANDBOX_PROVIDER_NAME = 'sandbox';
const DEFAULT_PAGE_SIZE = 100;
const DEFAULT_FOLLOW_PAGE_SIZE = 1000;

/** The error a wait or an extraction rejects with when its signal aborts (name 'AbortError'). */
export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  const error = new Error('The operation was aborted', { cause: reason });
  error.name = 'AbortError';
  return error;
}

export function isAbortError(error: unknown): boolean {
  return error instanceof Error && error.name === 'AbortError';
}

/** setTimeout as a promise that rejects with an AbortError as soon as `signal` aborts. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortError(signal));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * What one request delivers: the item at each global index, and how many. A profile bundle
 * is the profile (index 0) followed by the posts of the platform's `posts` operation.
 */
interface Plan {
  total: number;
  pageSize: number;
  /** Bundles put the profile alone on the first page. */
  bundle: boolean;
  item(index: number): Item;
}

const DRIFTING_COUNTS = ['followers_count', 'following_count', 'posts_count'] as const;
const DRIFTING_METRICS = ['views', 'likes', 'comments', 'shares'] as const;

/** An item as `sandbox_drift_N` shows it now: its counts and metrics grown by N a second since the epoch. */
export function drifted(item: Item, perSecond: number, nowMs: number = Date.now()): Item {
  const grow = perSecond * Math.max(0, Math.floor((nowMs - SANDBOX_DRIFT_EPOCH_MS) / 1000));
  const out: Record<string, unknown> = { ...item };
  for (const key of DRIFTING_COUNTS) if (typeof out[key] === 'number') out[key] = out[key] + grow;
  const metrics = out.metrics as Record<string, unknown> | null | undefined;
  if (metrics && typeof metrics === 'object') {
    const grown: Record<string, unknown> = { ...metrics };
    for (const key of DRIFTING_METRICS) if (typeof grown[key] === 'number') grown[key] = grown[key] + grow;
    out.metrics = grown;
  }
  return out as Item;
}

function plan(request: ExtractionRequest, options: Required<Omit<SandboxProviderOptions, 'sleep' | 'latencyMs'>>): Plan {
  const planned = basePlan(request, options);
  const drift = parseSandboxTokens(request.target).drift;
  if (drift <= 0) return planned;
  const nowMs = Date.now();
  return { ...planned, item: (index) => drifted(planned.item(index), drift, nowMs) };
}

function basePlan(request: ExtractionRequest, options: Required<Omit<SandboxProviderOptions, 'sleep' | 'latencyMs'>>): Plan {
  const spec = findOperation(request.platform, request.operation);
  if (!spec) {
    throw new ProviderError('internal_error', `the sandbox does not serve ${request.platform}/${request.operation}`, false);
  }
  const tokens = parseSandboxTokens(request.target);
  const pageSize = spec.operation === 'followers' || spec.operation === 'following' ? options.followPageSize : options.pageSize;
  const limit = Math.max(0, Math.min(Math.floor(request.limit), spec.max_results));
  const available = (wanted: number): number => (tokens.count === null ? wanted : Math.min(tokens.count, wanted));
  const stream = openStream(request.platform, spec, request.target);

  const postsSpec = bundlePostsSpec(request.platform);
  if (request.includePosts > 0 && supportsBundle(spec) && postsSpec) {
    const posts: Stream = openStream(request.platform, postsSpec, request.target);
    const postCount = tokens.empty ? 0 : available(Math.floor(request.includePosts));
    return {
      total: tokens.empty ? 0 : 1 + postCount,
      pageSize,
      bundle: true,
      item: (index) => (index === 0 ? stream.item(0) : posts.item(index - 1)),
    };
  }
  if (tokens.rolling > 0) {
    // A feed that gains `rolling` items a second: position 0 is the newest item, whose sequence
    // number (its ID) is the number of items the feed has gained since the epoch.
    const head = Math.floor((Date.now() / 1000) * tokens.rolling);
    return {
      total: tokens.empty ? 0 : available(limit),
      pageSize,
      bundle: false,
      // Ages come from the position (newest first); the ID is the item's sequence number.
      item: (index) => ({ ...stream.item(index), id: String(head - index) }),
    };
  }
  return {
    total: tokens.empty ? 0 : available(limit),
    pageSize,
    bundle: false,
    item: (index) => stream.item(index),
  };
}

function parseCursor(cursor: string | null): number {
  if (cursor === null || cursor === '') return 0;
  if (!/^\d{1,9}$/.test(cursor)) {
    throw new ProviderError('internal_error', `malformed sandbox resume cursor "${cursor}"`, false, null, { cursor });
  }
  return Number(cursor);
}

/**
 * The sandbox provider: serves every catalog operation with deterministic synthetic data
 * derived from the target, and simulates upstream situations through magic tokens in the
 * target (see tokens.ts). Used when no upstream credentials are configured, and in tests.
 */
export function createSandboxProvider(options: SandboxProviderOptions = {}): Provider {
  const latencyMs = Math.max(0, options.latencyMs ?? 0);
  const sleep = options.sleep ?? abortableSleep;
  const sizes = {
    pageSize: Math.max(1, options.pageSize ?? DEFAULT_PAGE_SIZE),
    followPageSize: Math.max(1, options.followPageSize ?? DEFAULT_FOLLOW_PAGE_SIZE),
  };

  async function* extract(request: ExtractionRequest): AsyncGenerator<Page> {
    const tokens = parseSandboxTokens(request.target);
    const context = { platform: request.platform, operation: request.operation, target: request.target };
    const wait = latencyMs + tokens.slowMs;
    const beforePage = async (): Promise<void> => {
      if (request.signal.aborted) throw abortError(request.signal);
      if (wait > 0) await sleep(wait, request.signal);
      if (request.signal.aborted) throw abortError(request.signal);
    };

    // The first upstream call is where the target turns out to be missing, private or flaky.
    await beforePage();
    if (tokens.notFound) throw ProviderError.notFound(`${request.target} was not found on ${request.platform}`, context);
    if (tokens.private) throw ProviderError.private(`${request.target} is private on ${request.platform}`, context);
    if (request.attempt <= tokens.flakyAttempts) {
      throw ProviderError.unavailable(`upstream unavailable (attempt ${request.attempt} of ${tokens.flakyAttempts} failing)`, null, {
        ...context,
        attempt: request.attempt,
      });
    }

    const work = plan(request, sizes);
    let offset = parseCursor(request.resumeCursor);
    if (offset >= work.total) {
      yield { items: [], cursor: null, total: work.total };
      return;
    }
    let first = true;
    while (offset < work.total) {
      if (!first) await beforePage();
      first = false;
      const end = work.bundle && offset === 0 ? 1 : Math.min(work.total, offset + work.pageSize);
      const items: Item[] = new Array<Item>(end - offset);
      for (let i = offset; i < end; i++) items[i - offset] = { ...work.item(i), source: 'sandbox' };
      offset = end;
      yield { items, cursor: offset < work.total ? String(offset) : null, total: work.total };
    }
  }

  return {
    name: SANDBOX_PROVIDER_NAME,
    source: 'sandbox' as const,
    supports: (platform: Platform, operation: string) =>
      findOperation(platform, operation) !== undefined && hasGenerator(platform, operation),
    extract,
  };
}
