/**
 * Lists. A list call returns a `List`: `await` it for the first page, or iterate it with
 * `for await` for every item of every page, filters kept.
 *
 * Where the next page is: the answer's `Link: <…>; rel="next"` (lists of jobs, batches and
 * schedules), `next_cursor` (a job's items), or, for lists paged by `starting_after` without a
 * Link header (audit events, webhook deliveries), the last item's ID when the page came back
 * full. Only the query of a Link is used, sent to the client's own base URL: a Link can never
 * send the API key to another host.
 */

export interface Page<T> {
  data: T[];
  /** True when a further page exists. */
  hasMore: boolean;
  /** The next page, or null after the last one. */
  next(): Promise<Page<T> | null>;
}

/** One page as a fetcher returns it: its items and the query of the next page (null at the end). */
export interface RawPage<T> {
  data: T[];
  nextQuery: Record<string, string> | null;
}

export type PageFetcher<T> = (query: Record<string, string>) => Promise<RawPage<T>>;

export class List<T> implements PromiseLike<Page<T>>, AsyncIterable<T> {
  private first: Promise<Page<T>> | undefined;

  constructor(
    private readonly fetchPage: PageFetcher<T>,
    private readonly query: Record<string, string> = {},
  ) {}

  /** The first page. */
  firstPage(): Promise<Page<T>> {
    this.first ??= this.pageAt(this.query);
    return this.first;
  }

  then<A = Page<T>, B = never>(
    onFulfilled?: ((page: Page<T>) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.firstPage().then(onFulfilled, onRejected);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let page: Page<T> | null = await this.pageAt(this.query);
    while (page) {
      yield* page.data;
      page = await page.next();
    }
  }

  /** Every item of every page, in one array (mind the size of what you ask for). */
  async toArray(): Promise<T[]> {
    const all: T[] = [];
    for await (const item of this) all.push(item);
    return all;
  }

  private async pageAt(query: Record<string, string>): Promise<Page<T>> {
    const raw = await this.fetchPage(query);
    // The first query's filters stay on every page, whatever the next-page link repeats of them.
    const nextQuery = raw.nextQuery === null ? null : { ...this.query, ...raw.nextQuery };
    return {
      data: raw.data,
      hasMore: nextQuery !== null,
      next: () => (nextQuery === null ? Promise.resolve(null) : this.pageAt(nextQuery)),
    };
  }
}

/** The query of a `Link` header's rel="next" target, or null. */
export function nextFromLink(link: string | null): Record<string, string> | null {
  if (!link) return null;
  for (const part of link.split(/,(?=\s*<)/)) {
    const match = /^\s*<([^>]*)>(.*)$/.exec(part);
    if (!match) continue;
    const rels = /;\s*rel\s*=\s*"?([^";]+)"?/i.exec(match[2])?.[1]?.split(/\s+/) ?? [];
    if (!rels.includes('next')) continue;
    const url = new URL(match[1], 'http://link.invalid');
    return Object.fromEntries(url.searchParams.entries());
  }
  return null;
}

/** Query values as strings, without the undefined ones. */
export function queryOf(params: object | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(params ?? {})) {
    if (value === undefined || value === null) continue;
    out[key] = String(value);
  }
  return out;
}
