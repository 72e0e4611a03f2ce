import { sql } from 'kysely';
import type { Executor } from '@sdx/db';
import { StoreUnavailable } from '@sdx/storage';
import type { ResultObjects } from '../resources';
import { bucketOf, partOf } from './result-objects';

/**
 * The reading of a result's stored pages where they are: a page's items in its row
 * (`rowLines`), or, with RESULT_STORE=s3, in an object of the result bucket (`ObjectPages`).
 * results.ts slices a result and hands each slice here.
 */

/** A run of consecutive items: from item `from` of page `first` to item `to` of page `last` (0-based, inclusive). */
export interface Slice {
  first: number;
  from: number;
  last: number;
  to: number;
}

/** A stored page's number and item count, and its object's key when it is one: what slicing a result needs. */
export interface PageCount {
  page_no: number;
  item_count: number;
  object_key: string | null;
  /** The page's part of a shared object (null: the object is the page). */
  object_offset: number | null;
  stored_bytes: number | null;
}

// ---------------------------------------------------------------------------------------------
// Pages kept as objects

/**
 * The reader of a result whose pages are objects (null when every page is in its row: the SQL
 * reads above). A slice's pages are fetched in order and the last one is kept, so the slices of
 * one page fetch it once and a read holds one page at most. A page still in its row (an empty
 * page, or one written before the store was switched) is read from the row.
 */
export class ObjectPages {
  private last: { pageNo: number; lines: string[] } | null = null;

  constructor(
    private readonly db: Executor,
    private readonly objects: ResultObjects | undefined,
    private readonly sourceId: string,
    private readonly pages: ReadonlyMap<number, PageCount>,
  ) {}

  /** The slice's items as their texts, page by page (the pages of the result between its bounds, in order). */
  async slice(slice: Slice): Promise<string[][]> {
    const out: string[][] = [];
    for (const page of this.pages.values()) {
      if (page.page_no < slice.first || page.page_no > slice.last) continue;
      const lines = await this.page(page);
      const from = page.page_no === slice.first ? slice.from : 0;
      const to = page.page_no === slice.last ? slice.to : lines.length - 1;
      out.push(from === 0 && to === lines.length - 1 ? lines : lines.slice(from, to + 1));
    }
    return out;
  }

  /**
   * A page object's lines. An object deleted since the page list was read is a page moved back
   * into its row (move-results): it is read from there.
   */
  private async objectLines(page: PageCount): Promise<string[]> {
    const pageNo = page.page_no;
    try {
      return await bucketOf({ resultObjects: this.objects }).lines(page.object_key!, partOf(page));
    } catch (err) {
      if ((err as { name?: string }).name !== 'NoSuchKey') throw err;
      const row = await this.db
        .selectFrom('job_result_pages')
        .select(['object_key', sql<boolean>`items is not null`.as('in_row')])
        .where('job_id', '=', this.sourceId)
        .where('page_no', '=', pageNo)
        .executeTakeFirst();
      if (row?.in_row) return rowLines(this.db, this.sourceId, pageNo);
      throw new StoreUnavailable(`Page ${pageNo} of the result of ${this.sourceId} is missing from the object store.`, err);
    }
  }

  private async page(page: PageCount): Promise<string[]> {
    if (this.last?.pageNo === page.page_no) return this.last.lines;
    let lines: string[];
    if (page.item_count === 0) lines = [];
    else if (page.object_key === null) lines = await rowLines(this.db, this.sourceId, page.page_no);
    else lines = await this.objectLines(page);
    if (lines.length !== page.item_count) {
      throw new StoreUnavailable(
        `Page ${page.page_no} of the result of ${this.sourceId} holds ${lines.length} items where ${page.item_count} were recorded.`,
      );
    }
    this.last = { pageNo: page.page_no, lines };
    return lines;
  }
}

/** A page's items, kept in its row, as their texts. */
export async function rowLines(db: Executor, sourceId: string, pageNo: number): Promise<string[]> {
  const { rows } = await sql<{ line: string }>`
    select e.value::text as line
    from job_result_pages p cross join lateral jsonb_array_elements(p.items) with ordinality as e(value, n)
    where p.job_id = ${sourceId} and p.page_no = ${pageNo}
    order by e.n
  `.execute(db);
  return rows.map((row) => row.line);
}
