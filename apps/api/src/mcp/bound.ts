import { readJobItems, type ResultAccess, type Tenant } from '@sdx/domain/api';

/** Bytes of `value` as JSON text (UTF-8). */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

/** The longest cursor this server hands out is far below this: room kept for it when items are measured. */
const CURSOR_ROOM = 96;

/**
 * How many of `items`, from the first, fit in `budget` bytes of JSON once placed in `frame`
 * (under `items`, with `truncated` and a `next_cursor` of any length this server hands out).
 * Items are never cut inside: the answer is a count of whole items.
 */
export function itemsThatFit(frame: Record<string, unknown>, items: readonly unknown[], budget: number): number {
  let used = jsonBytes({ ...frame, items: [], truncated: true, next_cursor: null }) + CURSOR_ROOM;
  for (const [index, item] of items.entries()) {
    used += jsonBytes(item) + (index > 0 ? 1 : 0);
    if (used > budget) return index;
  }
  return items.length;
}

export interface BoundedItems {
  items: unknown[];
  /** Where the next page starts: null once the result is read to its end. */
  next_cursor: string | null;
  /** Whether the output budget, rather than `limit`, ended this page. */
  truncated: boolean;
  /** Items skipped because one alone is larger than the whole output budget (read them with GET /v1/jobs/{job_id}/items). */
  skipped_oversized: number;
}

/**
 * A page of a completed job's items (jobs/items.ts readJobItems, the cursor of GET
 * /v1/jobs/{job_id}/items) cut to what fits in `budget` bytes beside `frame`. When the budget
 * cuts the page, the page is read again up to the last item that fits, so that `next_cursor`
 * names exactly the first item not returned: paging on loses and repeats nothing.
 */
export async function boundedItems(
  store: ResultAccess,
  tenant: Tenant,
  jobId: string,
  page: { limit: number; cursor: string | null },
  frame: Record<string, unknown>,
  budget: number,
): Promise<BoundedItems> {
  const read = await readJobItems(store, tenant, jobId, page);
  const items = JSON.parse(`[${read.itemsJson}]`) as unknown[];
  const fit = itemsThatFit(frame, items, budget);
  if (fit === items.length) return { items, next_cursor: read.nextCursor, truncated: false, skipped_oversized: 0 };
  if (fit === 0) {
    // One item alone exceeds the budget: step over it rather than answer the same cursor forever.
    const past = await readJobItems(store, tenant, jobId, { limit: 1, cursor: page.cursor });
    return { items: [], next_cursor: past.nextCursor, truncated: true, skipped_oversized: 1 };
  }
  const cut = await readJobItems(store, tenant, jobId, { limit: fit, cursor: page.cursor });
  return { items: items.slice(0, fit), next_cursor: cut.nextCursor, truncated: true, skipped_oversized: 0 };
}
