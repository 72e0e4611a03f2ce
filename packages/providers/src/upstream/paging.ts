import type { ExtractionRequest, Item, Page, ProfileItem } from '../types';
import { abortError } from './http';

/**
 * The cursor an adapter saves with each page. It is opaque to the worker: JSON holding the number
 * of items delivered so far in this stage (`n`), the upstream's next-page token (`t`), the stage
 * (`s`, "posts" for the posts of a profile bundle) and adapter state worth not re-fetching (`x`).
 * `request.limit` stays the job's effective limit on every attempt; the adapter subtracts `n`.
 */
export interface CursorState {
  n: number;
  t: string | null;
  s?: string;
  x?: Record<string, string>;
}

export function encodeCursor(state: CursorState): string {
  return JSON.stringify(state);
}

/** The saved cursor, or null (start over) when absent or not one of ours. */
export function decodeCursor(cursor: string | null): CursorState | null {
  if (!cursor) return null;
  try {
    const v = JSON.parse(cursor) as Partial<CursorState>;
    if (typeof v !== 'object' || v === null || typeof v.n !== 'number' || v.n < 0) return null;
    if (v.t !== null && typeof v.t !== 'string') return null;
    return { n: v.n, t: v.t, ...(v.s ? { s: v.s } : {}), ...(v.x ? { x: v.x } : {}) };
  } catch {
    return null;
  }
}

export interface Fetched {
  items: Item[];
  /** Token of the next page; null when the upstream has no more. */
  next: string | null;
  total?: number | null;
}

export interface PaginateOptions {
  limit: number;
  /** Largest page the upstream serves. */
  pageMax: number;
  /** Smallest page size the upstream accepts (asked for even when fewer remain). */
  pageMin?: number;
  /** Where a previous attempt stopped, or null. */
  start: CursorState | null;
  stage?: string;
  /** Adapter state kept in every cursor. */
  state?: Record<string, string>;
  signal: AbortSignal;
  fetch(token: string | null, size: number): Promise<Fetched>;
}

const MAX_EMPTY_PAGES = 20;

/**
 * Pages until exactly `limit` items were delivered or the upstream has no more. Each upstream
 * request yields one page, asking for min(pageMax, remaining) items; no request is made once the
 * limit is reached. Every page carries the cursor to resume from.
 */
export async function* paginate(options: PaginateOptions): AsyncGenerator<Page> {
  const { limit, pageMax, signal } = options;
  let delivered = options.start?.n ?? 0;
  let token = options.start?.t ?? null;
  let empty = 0;
  while (delivered < limit) {
    if (signal.aborted) throw abortError(signal);
    const remaining = limit - delivered;
    const size = Math.max(options.pageMin ?? 1, Math.min(pageMax, remaining));
    const fetched = await options.fetch(token, size);
    const items = fetched.items.slice(0, remaining);
    delivered += items.length;
    empty = items.length === 0 ? empty + 1 : 0;
    token = fetched.next;
    const done = delivered >= limit || token === null || empty >= MAX_EMPTY_PAGES;
    const cursor = done
      ? null
      : encodeCursor({
          n: delivered,
          t: token,
          ...(options.stage ? { s: options.stage } : {}),
          ...(options.state ? { x: options.state } : {}),
        });
    yield { items, cursor, ...(fetched.total !== undefined ? { total: fetched.total } : {}) };
    if (done) return;
  }
}

/** A single-item operation: one page, no cursor. */
export async function* single(fetch: () => Promise<Item>): AsyncGenerator<Page> {
  const item = await fetch();
  yield { items: [item], cursor: null, total: 1 };
}

/**
 * A profile, then (for `include_posts` > 0) the profile's posts. The first page carries the
 * profile; later pages the posts, resumable at stage "posts".
 */
export async function* profileBundle(
  request: ExtractionRequest,
  profile: () => Promise<ProfileItem>,
  posts: (profile: ProfileItem | null, limit: number, start: CursorState | null) => AsyncIterable<Page>,
): AsyncGenerator<Page> {
  const resume = decodeCursor(request.resumeCursor);
  const wantsPosts = request.includePosts > 0;
  let item: ProfileItem | null = null;
  if (resume?.s !== 'posts') {
    item = await profile();
    yield {
      items: [item],
      cursor: wantsPosts ? encodeCursor({ n: 0, t: null, s: 'posts' }) : null,
      total: wantsPosts ? null : 1,
    };
    if (!wantsPosts) return;
  }
  const start = resume?.s === 'posts' ? resume : null;
  yield* posts(item, request.includePosts, start);
}
